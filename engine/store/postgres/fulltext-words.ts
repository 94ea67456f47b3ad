import { sqlLiteral } from '../sql/idents.js';

/**
 * What PostgreSQL's text-search parser is given, of an indexed text and of a query alike: the
 * text with each ASCII punctuation character read as a space, one for one.
 *
 * Why: SQLite's FTS5 (unicode61) splits a text at every character that is not a letter or a
 * digit, so `mailbox` finds `quentin@mailbox.example`, `example` finds `https://acme.example`,
 * `14` finds `3.14` and `foo` finds `foo.bar`. PostgreSQL's parser keeps such runs whole as
 * tokens of their own (email, url, host, file, version and decimal numbers): on it those
 * searches found nothing, where contract.md §8 says every rule holds the same on both. With
 * the punctuation gone the parser sees the words unicode61 sees. Other characters (letters,
 * digits, the separator, non-ASCII punctuation, which the parser already splits at) stay.
 *
 * One for one, so the text ts_headline marks has the stored text's length and its marks fall
 * on the same offsets of the stored text (fulltext-query.ts `markedAsStored`); and `<`, `>`, `&`
 * never reach ts_headline, which would read them as markup and drop it.
 */
/** ASCII punctuation, as code point ranges: ! to /, : to @, [ to `, { to ~ (32 characters). */
const RANGES: readonly (readonly [number, number])[] = [[0x21, 0x2f], [0x3a, 0x40], [0x5b, 0x60], [0x7b, 0x7e]];
const PUNCTUATION = new Set(RANGES.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => String.fromCodePoint(from + i))));
/**
 * The same set as a bracket expression of PostgreSQL's regular expressions (no backslash, quote
 * or `]` needs writing: each sits inside a range). regexp_replace, not translate(): translate
 * took ~11 µs a row on 150-character texts (1.1 s per 100,000), regexp_replace ~0.8.
 */
const BRACKET = `[${RANGES.map(([from, to]) => `${String.fromCodePoint(from)}-${String.fromCodePoint(to)}`).join('')}]`;

/** The SQL of `expr` (text) with the punctuation read as spaces: an IMMUTABLE expression (the index's generated column uses it). */
export const wordsSql = (expr: string): string => `regexp_replace(${expr}, ${sqlLiteral(BRACKET)}, ' ', 'g')`;

/** The same in JS, for checking a headline against the text it was made of. */
export const wordsText = (text: string): string => {
  let out = '';
  for (const ch of text) out += PUNCTUATION.has(ch) ? ' ' : ch;
  return out;
};
