import type { Executor, FulltextInput } from '../port.js';
import type { SearchHit } from '../../model/search-hit.js';
import { CLOSE, OPEN, queryTerms, unmark } from '../sql/search-text.js';

/**
 * Running a cross-object search (contract.md §3) against the index fulltext.ts keeps.
 *
 * The user's query is never tsquery syntax: it is split as the SQLite backend splits it
 * (`"quoted phrases"` matched exactly, bare words by prefix), and each term goes to
 * PostgreSQL as a bound string: a phrase through phraseto_tsquery, a word through
 * `_ss_prefix_tsquery` (its tokens, each a prefix, in order), so `&`, `|`, `!`, `:*` or
 * parentheses in a query are plain text and no query is a syntax error. Terms are ANDed
 * over a record's text-like attributes together (each word somewhere in the record, as the
 * SQLite backend's one row per record matches them), or over one document title. A term with
 * no letter or digit is left out; a query with none finds nothing.
 */

const CONFIG = "'schemasync_search'";

/**
 * The tsqueries of a user query's terms (SQL and its parameters), or null when it has no
 * searchable term. `terms` selects them as t0, t1, …; `any` (their OR) is what a row must
 * match to take part, `every` (a GROUP BY's HAVING) that each term matched some row of it.
 */
function tsQuery(query: string): { terms: string; any: string; every: string; params: string[] } | null {
  const parts: string[] = [];
  const params: string[] = [];
  for (const { text, phrase } of queryTerms(query)) {
    parts.push(phrase ? `phraseto_tsquery(${CONFIG}, ?::text)` : '_ss_prefix_tsquery(?::text)');
    params.push(text);
  }
  if (parts.length === 0) return null;
  const names = parts.map((_, i) => `t${i}`);
  return {
    terms: `SELECT ${parts.map((p, i) => `${p} AS ${names[i]}`).join(', ')}`,
    any: names.map((n) => `z.${n}`).join(' || '),
    every: names.map((n) => `bool_or(x.${n})`).join(' AND '),
    params,
  };
}

/**
 * ts_headline drops what its parser takes for an HTML tag (`<b>` becomes a space), but the
 * record's text must come back as it is (contract §3: no markup added, none taken away):
 * `<` goes to the headline as this control character and comes back after.
 */
const LT = '\u0003';
/** About the 24 tokens SQLite's snippet() shows, one fragment around the best match. */
const HEADLINE = `StartSel=${OPEN}, StopSel=${CLOSE}, MaxWords=24, MinWords=12, ShortWord=0, MaxFragments=1, FragmentDelimiter=" … "`;

interface Row {
  id: number;
  object: string;
  record_id: string;
  attribute: string;
  rank: number;
}

/**
 * Best first: ts_rank over each (record, attribute) row, the best row of each matching group
 * and the best group per record kept. Rank
 * normalisation 1 divides by 1 + log(length), so a short text naming the term outranks a
 * long one mentioning it once, as FTS5's bm25 ranks them (without it they tie).
 * Ranking reads only `_ss_search`; headlines are made for the returned hits only.
 */
export async function runFulltext(ex: Executor, input: FulltextInput): Promise<SearchHit[]> {
  const q = tsQuery(input.query);
  if (q === null || (input.objects !== null && input.objects.length === 0)) return [];
  const scope = input.objects === null ? '' : ' AND s.object IN (SELECT jsonb_array_elements_text(?::jsonb))';
  const scopeParams = input.objects === null ? [] : [JSON.stringify(input.objects)];
  const hits = new Map<string, { object: string; id: string; attribute: string; row: number; score: number }>();
  // A record matching in several attributes yields several rows: a few extra rows per hit
  // are read so dedup still fills the page in the common case, and the loop reads more if not.
  let fetch = input.limit * 3;
  // q.q: the terms' OR, with each term's tsquery beside it (a row's matches, for the HAVING).
  const terms = `(SELECT ${q.any} AS q, z.* FROM (${q.terms}) z) q`;
  const matches = q.params.map((_, i) => `s.tsv @@ q.t${i} AS t${i}`).join(', ');
  for (;;) {
    // A record's attribute rows are one group (document_id NULL), each document title one:
    // the group must match every term; its best row (by ts_rank against any term) is the hit.
    // One term needs no grouping: a group matches when a row does, and its best row is the
    // best of the rows (the dedup below keeps it), so a one-word search ranks rows directly.
    const matching = `FROM _ss_search s, ${terms} WHERE s.tsv @@ q.q${scope}`;
    const sql =
      q.params.length === 1
        ? `SELECT s.id, s.object, s.record_id, s.attribute, ts_rank(s.tsv, q.q, 1) AS rank ${matching} ORDER BY rank DESC, s.id LIMIT ?`
        : `SELECT (array_agg(x.id ORDER BY x.rank DESC, x.id))[1] AS id, x.object, x.record_id, (array_agg(x.attribute ORDER BY x.rank DESC, x.id))[1] AS attribute, max(x.rank) AS rank ` +
          `FROM (SELECT s.id, s.object, s.record_id, s.document_id, s.attribute, ts_rank(s.tsv, q.q, 1) AS rank, ${matches} ${matching}) x ` +
          `GROUP BY x.object, x.record_id, x.document_id HAVING ${q.every} ORDER BY rank DESC, id LIMIT ?`;
    const rows = await ex.all<Row>(sql, [...q.params, ...scopeParams, fetch]);
    hits.clear();
    for (const r of rows) {
      const key = `${r.object}\u0000${r.record_id}`;
      if (!hits.has(key)) hits.set(key, { object: r.object, id: r.record_id, attribute: r.attribute, row: Number(r.id), score: Number(r.rank) });
      if (hits.size === input.limit) break;
    }
    if (hits.size >= input.limit || rows.length < fetch) break;
    fetch *= 4;
  }
  const chosen = [...hits.values()];
  if (chosen.length === 0) return [];
  const marked = await ex.all<{ id: number; marked: string; text: string }>(
    `SELECT s.id, ts_headline(${CONFIG}, replace(s.text, '<', chr(3)), q.q, '${HEADLINE}') AS marked, s.text FROM _ss_search s, ${terms} ` +
      'WHERE s.id IN (SELECT jsonb_array_elements_text(?::jsonb)::bigint)',
    [...q.params, JSON.stringify(chosen.map((c) => c.row))],
  );
  const snippets = new Map<number, string>();
  const texts = new Map<number, string>();
  for (const r of marked) {
    texts.set(Number(r.id), r.text);
    // Stored text holding a marker character would fake a highlight: shown plain instead.
    const plain = r.text.includes(OPEN) || r.text.includes(CLOSE) || r.text.includes(LT);
    snippets.set(Number(r.id), plain ? r.text.replaceAll(OPEN, '').replaceAll(CLOSE, '').replaceAll(LT, '') : r.marked.replaceAll(LT, '<'));
  }
  return chosen.map((c) => {
    const { snippet, highlights } = inText(texts.get(c.row) ?? '', unmark(snippets.get(c.row) ?? ''));
    return { object: c.object, id: c.id, attribute: c.attribute, score: c.score, snippet, highlights };
  });
}

const WORD = /[\p{L}\p{N}]/u;

/**
 * ts_headline's fragment runs from its first word to its last: what stands around them
 * (`<b>` before a name, `</b>` or a full stop after it) is cut. The snippet is the same
 * stretch of the stored text widened to the neighbouring words, with `…` where text was
 * left out (as FTS5's snippet answers); highlights move with it.
 */
function inText(text: string, fragment: { snippet: string; highlights: [number, number][] }): { snippet: string; highlights: [number, number][] } {
  const at = fragment.snippet === '' ? -1 : text.indexOf(fragment.snippet);
  if (at < 0) return fragment;
  let start = at;
  let end = at + fragment.snippet.length;
  while (start > 0 && !WORD.test(text[start - 1]!)) start--;
  while (end < text.length && !WORD.test(text[end]!)) end++;
  while (start < at && /\s/u.test(text[start]!)) start++;
  while (end > at + fragment.snippet.length && /\s/u.test(text[end - 1]!)) end--;
  const before = start > 0 ? '…' : '';
  const shift = before.length + at - start;
  return {
    snippet: `${before}${text.slice(start, end)}${end < text.length ? '…' : ''}`,
    highlights: fragment.highlights.map(([a, b]) => [a + shift, b + shift]),
  };
}
