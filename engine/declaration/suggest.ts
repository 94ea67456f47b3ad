import { distance } from 'fastest-levenshtein';

/**
 * Words people write for our attribute types (issue 2: `strng` → `text`?). Checked before
 * edit distance because `string` is nowhere near `text` by letters.
 */
export const TYPE_ALIASES: Readonly<Record<string, string>> = {
  string: 'text',
  str: 'text',
  varchar: 'text',
  textarea: 'text',
  int: 'integer',
  bigint: 'integer',
  float: 'number',
  double: 'number',
  decimal: 'number',
  numeric: 'number',
  real: 'number',
  bool: 'boolean',
  enum: 'select',
  choice: 'select',
  tags: 'multiselect',
  timestamp: 'datetime',
  time: 'datetime',
  file: 'document',
  attachment: 'document',
  link: 'url',
  uri: 'url',
  reference: 'relation',
  ref: 'relation',
  object: 'json',
};

/**
 * The closest candidate to `input`, or undefined when none is close enough to be a typo
 * (about a third of the word’s letters may differ, at least one).
 */
export function closest(input: string, candidates: Iterable<string>): string | undefined {
  const lower = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (c === input) continue;
    const d = c === lower ? 0.5 : distance(lower, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  const limit = Math.max(1, Math.ceil(input.length / 3));
  return bestDistance <= limit ? best : undefined;
}

/** Aliases first (`string` → `text`), then a typo (`strng` → …), for attribute types. */
export function suggestType(input: string, types: readonly string[]): string | undefined {
  const alias = TYPE_ALIASES[input.toLowerCase()];
  if (alias !== undefined) return alias;
  const near = closest(input, types);
  if (near !== undefined) return near;
  // A typo of an alias (`strng` is one letter from `string`) suggests what the alias means.
  const nearAlias = closest(input, Object.keys(TYPE_ALIASES));
  return nearAlias === undefined ? undefined : TYPE_ALIASES[nearAlias];
}

/** A valid name near an invalid one: `Amount` → `amount`, `due-date` → `due_date`. */
export function suggestName(input: string): string | undefined {
  const fixed = input
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^[^a-z]+/, '')
    .replace(/_+$/, '')
    .slice(0, 63);
  return fixed.length > 0 && fixed !== input ? fixed : undefined;
}
