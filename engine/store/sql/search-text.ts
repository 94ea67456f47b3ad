/**
 * What both backends' search reads from a user query and writes into a snippet: one
 * definition, so SQLite's FTS5 and PostgreSQL's tsquery see the same terms and answer the
 * same marked text (contract.md §3 "Cross-object search").
 */

/** A private-use character the SQLite index writes between a record's attributes (sqlite/fulltext.ts SEPARATOR). */
export const SEPARATOR = '\uE000';

/**
 * The terms of a user query: `"quoted phrases"` (an unbalanced quote runs to the end) and
 * bare words, in order. Nothing else is syntax. A term with no letter or digit has no token
 * to match and is left out; the separator counts as a space, so no term can hold it.
 */
export function queryTerms(query: string): { text: string; phrase: boolean }[] {
  const terms: { text: string; phrase: boolean }[] = [];
  for (const m of query.replaceAll(SEPARATOR, ' ').matchAll(/"([^"]*)"?|([^\s"]+)/gu)) {
    const phrase = m[1];
    const text = phrase ?? m[2] ?? '';
    if (/[\p{L}\p{N}]/u.test(text)) terms.push({ text, phrase: phrase !== undefined });
  }
  return terms;
}

/** Markers around a highlighted stretch: control characters a stored text holding them is shown without. */
export const OPEN = '\u0001';
export const CLOSE = '\u0002';

/** A marked snippet → plain text and the [start, end) offsets (UTF-16, as JS strings index). */
export function unmark(marked: string): { snippet: string; highlights: [number, number][] } {
  let out = '';
  const highlights: [number, number][] = [];
  let start = -1;
  for (const ch of marked) {
    if (ch === OPEN) start = out.length;
    else if (ch === CLOSE) {
      if (start >= 0 && out.length > start) highlights.push([start, out.length]);
      start = -1;
    } else out += ch;
  }
  return { snippet: out, highlights };
}
