import { TYPES } from '../model/types/registry.js';

/**
 * Words people write for our attribute types (issue 2: `strng` → `text`?), each type's
 * `aliases` in the registry. Checked before edit distance because `string` is nowhere near
 * `text` by letters.
 */
const TYPE_ALIASES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.values(TYPES).flatMap((t) => (t.aliases ?? []).map((alias) => [alias, t.type])),
);

/**
 * Edit distance where swapping two neighbouring letters is one typo, not two (optimal
 * string alignment, a restricted Damerau–Levenshtein): `mni` is one step from `min`.
 * Only ever run on a problem's few candidates, so the plain O(n·m) table is fine.
 */
export function typoDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1, d[(i - 1) * cols + j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[(i - 2) * cols + j - 2]! + 1);
      d[i * cols + j] = v;
    }
  }
  return d[rows * cols - 1]!;
}

const sharedPrefix = (a: string, b: string): number => {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
};

/**
 * The closest candidate to `input`, or undefined when none is close enough to be a typo
 * (about a third of the word’s letters may differ, at least one). Ties go to the longer
 * shared start (people drop letters more than they change the first one, so `dsc` means
 * `desc`, not `asc`), then to the candidate listed first.
 */
export function closest(input: string, candidates: Iterable<string>): string | undefined {
  const lower = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  let bestPrefix = 0;
  for (const c of candidates) {
    if (c === input) continue;
    const cl = c.toLowerCase();
    const d = c === lower ? 0.5 : typoDistance(lower, cl);
    const prefix = sharedPrefix(lower, cl);
    if (d < bestDistance || (d === bestDistance && prefix > bestPrefix)) {
      best = c;
      bestDistance = d;
      bestPrefix = prefix;
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
