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

/**
 * A stored text holding a marker character itself would fake a highlight: such a record is
 * shown plain, its own marker characters taken out (both backends, one rule).
 */
export const holdsMarkers = (text: string): boolean => text.includes(OPEN) || text.includes(CLOSE);
export const withoutMarkers = (text: string): string => text.replaceAll(OPEN, '').replaceAll(CLOSE, '');

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

/** How the separator sits in a record row's text, between two attributes' text: a word between spaces. */
export const JOIN = ` ${SEPARATOR} `;

/** About the words FTS5's snippet() would show (24 tokens): one fragment around the best match. */
const WINDOW = 24;

/**
 * The fragment of a marked text a snippet shows: all of it when it is short, else WINDOW
 * words starting a few before the place that holds the most highlighted words, with `…`
 * where it was cut. Words are runs of non-space (a mark sits inside one, or spans a phrase's
 * words: a window never ends inside an open mark).
 */
export function fragment(marked: string): string {
  const words = [...marked.matchAll(/\S+/gu)].map((m) => ({ start: m.index, end: m.index + m[0].length, hit: m[0].includes(OPEN) }));
  if (words.length <= WINDOW) return marked.trim();
  let best = 0;
  let most = -1;
  for (let i = 0; i < words.length; i++) {
    if (!words[i]!.hit) continue;
    const from = Math.max(0, Math.min(i - 3, words.length - WINDOW));
    const n = words.slice(from, from + WINDOW).filter((w) => w.hit).length;
    if (n > most) [best, most] = [from, n];
  }
  let last = Math.min(words.length, best + WINDOW) - 1;
  const inside = (i: number): boolean => marked.lastIndexOf(OPEN, words[i]!.end) > marked.lastIndexOf(CLOSE, words[i]!.end);
  while (last < words.length - 1 && inside(last)) last++;
  const text = marked.slice(words[best]!.start, words[last]!.end);
  return `${best > 0 ? '…' : ''}${text}${last < words.length - 1 ? '…' : ''}`;
}

/**
 * The attribute a record hit is shown in and its marked fragment, from its row's segments
 * (each attribute's text in layout order, marked where the query matched): the segment whose
 * words are most often highlighted (matched words per word, the first of equals), as ranking
 * one row per attribute chose it: a name that is the match beats a long note that mentions it
 * twice. `plain` (a text that holds the markers itself, shown without them): the first
 * non-empty segment, unmarked.
 */
export function shownSegment(segments: readonly string[], layout: readonly string[], plain: boolean): { attribute: string; marked: string } {
  let best = plain ? segments.findIndex((t) => t !== '') : 0;
  let most = -1;
  if (!plain) {
    segments.forEach((t, i) => {
      const hits = t.split(OPEN).length - 1;
      const density = hits === 0 ? 0 : hits / Math.max(1, t.split(/\s+/u).filter(Boolean).length);
      if (density > most) [best, most] = [i, density];
    });
  }
  return { attribute: layout[Math.max(0, best)] ?? layout[0] ?? '', marked: fragment(segments[Math.max(0, best)] ?? '') };
}
