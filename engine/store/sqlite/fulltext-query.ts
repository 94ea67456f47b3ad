import type { FulltextInput } from '../port.js';
import type { Db } from './database.js';
import type { SearchHit } from '../../model/search-hit.js';

/**
 * Running a cross-object search (contract.md §3) against the index fulltext.ts keeps.
 *
 * The user's query is never FTS5 syntax: it is split into `"quoted phrases"` (matched
 * exactly) and bare words (matched by prefix), and every one is sent as an FTS5 string
 * (double quotes doubled), so `*`, `^`, `:`, `NEAR`, `AND`, parentheses are plain text and
 * no query can be an FTS5 syntax error. A term with no letter or digit has no token to
 * match and is left out; a query left with no term finds nothing.
 */

/** The FTS5 expression for a user query, or null when it has no searchable term. */
function ftsExpression(query: string): string | null {
  const terms: string[] = [];
  const re = /"([^"]*)"?|([^\s"]+)/gu;
  for (const m of query.matchAll(re)) {
    const phrase = m[1];
    const word = m[2];
    const text = phrase ?? word ?? '';
    if (!/[\p{L}\p{N}]/u.test(text)) continue;
    const quoted = `"${text.replaceAll('"', '""')}"`;
    terms.push(phrase !== undefined ? quoted : `${quoted}*`);
  }
  return terms.length === 0 ? null : terms.join(' ');
}

/** Markers for snippet(): control characters the stored text is checked not to hold. */
const OPEN = '\u0001';
const CLOSE = '\u0002';

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


/**
 * Best first: FTS5's bm25 over each (record, attribute) row, the best row per record kept.
 * Ranking reads only the index and `_ss_search`; snippets are made for the returned hits only.
 */
export function runFulltext(db: Db, input: FulltextInput): SearchHit[] {
  const expr = ftsExpression(input.query);
  if (expr === null || (input.objects !== null && input.objects.length === 0)) return [];
  const scope = input.objects === null ? '' : ' AND s.object IN (SELECT value FROM json_each(?))';
  const params: unknown[] = [expr];
  if (input.objects !== null) params.push(JSON.stringify(input.objects));
  // A record matching in several attributes yields several rows; a few extra rows per hit
  // are read so dedup still fills the page in the common case, and the loop reads more if not.
  const hits = new Map<string, { object: string; id: string; attribute: string; rowid: number; score: number }>();
  let fetch = input.limit * 3;
  for (;;) {
    // bm25() named in the select sorts ~35% faster than FTS5's `rank` column over a broad
    // prefix (56,000 matches: 26 ms against 40; measured in test/bench/search.bench.mjs's data).
    // Unscoped, the ranking runs in FTS5 alone and only the page is joined to its rows;
    // scoped, each match is checked against the objects before it may take a place.
    const cols = 's.object AS object, s.record_id AS id, s.attribute AS attribute';
    const sql =
      scope === ''
        ? `SELECT f.rowid AS rowid, f.rank AS rank, ${cols} FROM (SELECT rowid, bm25(_ss_fts) AS rank FROM _ss_fts WHERE _ss_fts MATCH ? ORDER BY rank LIMIT ?) f JOIN _ss_search s ON s.id = f.rowid ORDER BY f.rank`
        : `SELECT _ss_fts.rowid AS rowid, bm25(_ss_fts) AS rank, ${cols} FROM _ss_fts JOIN _ss_search s ON s.id = _ss_fts.rowid WHERE _ss_fts MATCH ?${scope} ORDER BY rank LIMIT ?`;
    const rows = db
      .prepare(sql)
      .all(...params, fetch) as { rowid: number; rank: number; object: string; id: string; attribute: string }[];
    hits.clear();
    for (const r of rows) {
      const key = `${r.object}\u0000${r.id}`;
      if (!hits.has(key)) hits.set(key, { object: r.object, id: r.id, attribute: r.attribute, rowid: r.rowid, score: -r.rank });
      if (hits.size === input.limit) break;
    }
    if (hits.size >= input.limit || rows.length < fetch) break;
    fetch *= 4;
  }
  const chosen = [...hits.values()];
  if (chosen.length === 0) return [];
  const snippets = new Map<number, string>();
  const srows = db
    .prepare(
      `SELECT rowid, snippet(_ss_fts, 0, '${OPEN}', '${CLOSE}', '…', 24) AS marked, (SELECT text FROM _ss_search WHERE id = _ss_fts.rowid) AS text FROM _ss_fts WHERE _ss_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))`,
    )
    .all(expr, JSON.stringify(chosen.map((c) => c.rowid))) as { rowid: number; marked: string; text: string }[];
  for (const r of srows) snippets.set(r.rowid, r.text.includes(OPEN) || r.text.includes(CLOSE) ? r.text.replaceAll(OPEN, '').replaceAll(CLOSE, '') : r.marked);
  return chosen.map((c) => {
    const { snippet, highlights } = unmark(snippets.get(c.rowid) ?? '');
    return { object: c.object, id: c.id, attribute: c.attribute, score: c.score, snippet, highlights };
  });
}
