import type { Executor, FulltextInput } from '../port.js';
import type { GlobalSearchHit } from '../types.js';
import { unmark } from '../sqlite/fulltext-query.js';

/**
 * Running a cross-object search (contract.md §3) against the index fulltext.ts keeps.
 *
 * The user's query is never tsquery syntax: it is split as the SQLite backend splits it
 * (`"quoted phrases"` matched exactly, bare words by prefix), and each term goes to
 * PostgreSQL as a bound string: a phrase through phraseto_tsquery, a word through
 * `_ss_prefix_tsquery` (its tokens, each a prefix, in order), so `&`, `|`, `!`, `:*` or
 * parentheses in a query are plain text and no query is a syntax error. Terms are ANDed,
 * as FTS5 does. A term with no letter or digit is left out; a query with none finds nothing.
 */

const CONFIG = "'schemasync_search'";

/** The tsquery for a user query (SQL and its parameters), or null when it has no searchable term. */
export function tsQuery(query: string): { sql: string; params: string[] } | null {
  const parts: string[] = [];
  const params: string[] = [];
  for (const m of query.matchAll(/"([^"]*)"?|([^\s"]+)/gu)) {
    const phrase = m[1];
    const text = phrase ?? m[2] ?? '';
    if (!/[\p{L}\p{N}]/u.test(text)) continue;
    parts.push(phrase !== undefined ? `phraseto_tsquery(${CONFIG}, ?::text)` : '_ss_prefix_tsquery(?::text)');
    params.push(text);
  }
  return parts.length === 0 ? null : { sql: parts.join(' && '), params };
}

/** Markers for ts_headline: control characters the stored text is checked not to hold. */
const OPEN = '\u0001';
const CLOSE = '\u0002';
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
 * Best first: ts_rank over each (record, attribute) row, the best row per record kept.
 * Ranking reads only `_ss_search`; headlines are made for the returned hits only.
 */
export async function runFulltext(ex: Executor, input: FulltextInput): Promise<GlobalSearchHit[]> {
  const q = tsQuery(input.query);
  if (q === null || (input.objects !== null && input.objects.length === 0)) return [];
  const scope = input.objects === null ? '' : ' AND s.object IN (SELECT jsonb_array_elements_text(?::jsonb))';
  const scopeParams = input.objects === null ? [] : [JSON.stringify(input.objects)];
  const hits = new Map<string, { object: string; id: string; attribute: string; row: number; score: number }>();
  // A record matching in several attributes yields several rows: a few extra rows per hit
  // are read so dedup still fills the page in the common case, and the loop reads more if not.
  let fetch = input.limit * 3;
  for (;;) {
    const rows = await ex.all<Row>(
      `SELECT s.id, s.object, s.record_id, s.attribute, ts_rank(s.tsv, q.q) AS rank FROM _ss_search s, (SELECT ${q.sql} AS q) q ` +
        `WHERE s.tsv @@ q.q${scope} ORDER BY rank DESC, s.id LIMIT ?`,
      [...q.params, ...scopeParams, fetch],
    );
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
    `SELECT s.id, ts_headline(${CONFIG}, s.text, q.q, '${HEADLINE}') AS marked, s.text FROM _ss_search s, (SELECT ${q.sql} AS q) q ` +
      'WHERE s.id IN (SELECT jsonb_array_elements_text(?::jsonb)::bigint)',
    [...q.params, JSON.stringify(chosen.map((c) => c.row))],
  );
  const snippets = new Map<number, string>();
  for (const r of marked) {
    // Stored text holding a marker character would fake a highlight: shown plain instead.
    snippets.set(Number(r.id), r.text.includes(OPEN) || r.text.includes(CLOSE) ? r.text.replaceAll(OPEN, '').replaceAll(CLOSE, '') : r.marked);
  }
  return chosen.map((c) => {
    const { snippet, highlights } = unmark(snippets.get(c.row) ?? '');
    return { object: c.object, id: c.id, attribute: c.attribute, score: c.score, snippet, highlights };
  });
}
