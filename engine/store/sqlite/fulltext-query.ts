import type { FulltextInput } from '../port.js';
import { tableIdent } from '../sql/idents.js';
import { RowIds, type Prepare } from './fulltext.js';
import type { SearchHit } from '../../model/search-hit.js';
import { CLOSE, fragment, holdsMarkers, JOIN, OPEN, queryTerms, shownSegment, unmark, withoutMarkers } from '../sql/search-text.js';

/**
 * Running a cross-object search (contract.md §3) against the index fulltext.ts keeps.
 *
 * The user's query is never FTS5 syntax: it is split into `"quoted phrases"` (matched
 * exactly) and bare words (matched by prefix), and every one is sent as an FTS5 string
 * (double quotes doubled), so `*`, `^`, `:`, `NEAR`, `AND`, parentheses are plain text and
 * no query can be an FTS5 syntax error. A term with no letter or digit has no token to
 * match and is left out; a query left with no term finds nothing (sql/search-text.ts queryTerms).
 */

/** The FTS5 expression for a user query, or null when it has no searchable term. */
function ftsExpression(query: string): string | null {
  const terms = queryTerms(query).map(({ text, phrase }) => `"${text.replaceAll('"', '""')}"${phrase ? '' : '*'}`);
  return terms.length === 0 ? null : terms.join(' ');
}

/**
 * The attribute a hit is shown in and its marked fragment. A document's row is its title; a
 * record's row is its attributes' text in `layout` order (fulltext.ts), split at the separator
 * (sql/search-text.ts shownSegment picks the attribute). A text that holds the markers itself
 * is shown unmarked (its own control characters taken out).
 */
function shown(marked: string, text: string, attribute: string | null, layout: readonly string[]): { attribute: string; marked: string } {
  const plain = holdsMarkers(text);
  const source = plain ? withoutMarkers(text) : marked;
  if (attribute !== null) return { attribute, marked: fragment(source) };
  return shownSegment(source.split(JOIN), layout, plain);
}

/**
 * The record ids of the fetched rows that name their record by rowid (record rows: RowIds in
 * fulltext.ts), read from each object's table; a document's row names its record itself.
 * Only a page and its few spares are resolved, one statement per object among them.
 */
function recordIds(prepare: Prepare, rows: readonly FetchedRow[]): Map<number, string> {
  const ids = new Map<number, string>();
  const byObject = new Map<string, FetchedRow[]>();
  for (const r of rows) {
    if (r.id !== null || r.object === null) continue;
    const list = byObject.get(r.object);
    if (list) list.push(r);
    else byObject.set(r.object, [r]);
  }
  for (const [object, list] of byObject) {
    const rowidOf = new Map(list.map((r) => [RowIds.rowid(r.rowid), r.rowid]));
    const sql = `SELECT _rowid_ AS n, id FROM ${tableIdent(object)} WHERE _rowid_ IN (SELECT value FROM json_each(?))`;
    const got = prepare(sql).all(JSON.stringify([...rowidOf.keys()])) as { n: number; id: string }[];
    for (const g of got) ids.set(rowidOf.get(g.n)!, g.id);
  }
  return ids;
}

/** A fetched index row: a document's names its object and record; a record's only its object (by code). */
interface FetchedRow {
  rowid: number;
  rank: number;
  object: string | null;
  id: string | null;
}

/**
 * Best first: FTS5's bm25 over each record's row (and each document's), the best row per
 * record kept. Ranking reads only the index and `_ss_search`; snippets are made for the
 * returned hits only.
 */
export function runFulltext(prepare: Prepare, input: FulltextInput): SearchHit[] {
  const expr = ftsExpression(input.query);
  if (expr === null || (input.objects !== null && input.objects.length === 0)) return [];
  // Scoped: a record's row by its object's code, a document's by the object it names.
  const scope =
    input.objects === null
      ? ''
      : ` AND (${RowIds.codeSql('_ss_fts.rowid')} IN (SELECT code FROM _ss_search_layout WHERE object IN (SELECT value FROM json_each(?))) OR s.object IN (SELECT value FROM json_each(?)))`;
  const params: unknown[] = [expr];
  if (input.objects !== null) params.push(JSON.stringify(input.objects), JSON.stringify(input.objects));
  // Unscoped, the ranking runs in FTS5 alone and only the page is joined to its rows; scoped,
  // each match is checked against the objects before it may take a place. bm25() named in the
  // select sorts ~35% faster than FTS5's `rank` column over a broad prefix (56,000 matches:
  // 26 ms against 40; measured in test/bench/search.bench.mjs's data).
  const matches =
    scope === ''
      ? 'SELECT f.rowid AS rowid, f.rank AS rank, s.object AS object, s.record_id AS id FROM (SELECT rowid, bm25(_ss_fts) AS rank FROM _ss_fts WHERE _ss_fts MATCH ? ORDER BY rank LIMIT ?) f JOIN _ss_search s ON s.id = f.rowid'
      : `SELECT _ss_fts.rowid AS rowid, bm25(_ss_fts) AS rank, s.object AS object, s.record_id AS id FROM _ss_fts JOIN _ss_search s ON s.id = _ss_fts.rowid WHERE _ss_fts MATCH ?${scope} ORDER BY rank LIMIT ?`;
  // A record's row names its object by code; a document's row names it itself.
  const sql = `SELECT m.rowid AS rowid, m.rank AS rank, COALESCE(m.object, l.object) AS object, m.id AS id FROM (${matches}) m LEFT JOIN _ss_search_layout l ON l.code = ${RowIds.codeSql('m.rowid')} ORDER BY m.rank`;
  // A record matching in its row and in document titles yields several rows; a few extra rows
  // per hit are read so dedup still fills the page in the common case, and the loop reads more if not.
  const hits = new Map<string, { object: string; id: string; rowid: number; score: number }>();
  let fetch = input.limit * 3;
  for (;;) {
    const rows = prepare(sql).all(...params, fetch) as FetchedRow[];
    const ids = recordIds(prepare, rows);
    hits.clear();
    for (const r of rows) {
      const object = r.object;
      const id = r.id ?? ids.get(r.rowid);
      if (object === null || id === undefined) continue; // a row whose record is gone: none in one snapshot
      const key = `${object}\u0000${id}`;
      if (!hits.has(key)) hits.set(key, { object, id, rowid: r.rowid, score: -r.rank });
      if (hits.size === input.limit) break;
    }
    if (hits.size >= input.limit || rows.length < fetch) break;
    fetch *= 4;
  }
  const chosen = [...hits.values()];
  if (chosen.length === 0) return [];
  const found = new Map<number, { attribute: string; marked: string }>();
  const srows = prepare(
    `SELECT _ss_fts.rowid AS rowid, highlight(_ss_fts, 0, '${OPEN}', '${CLOSE}') AS marked, s.text AS text, s.attribute AS attribute, l.attributes AS layout ` +
      `FROM _ss_fts JOIN _ss_search s ON s.id = _ss_fts.rowid LEFT JOIN _ss_search_layout l ON l.code = ${RowIds.codeSql('_ss_fts.rowid')} ` +
      `WHERE _ss_fts MATCH ? AND _ss_fts.rowid IN (SELECT value FROM json_each(?))`,
  ).all(expr, JSON.stringify(chosen.map((c) => c.rowid))) as { rowid: number; marked: string; text: string; attribute: string | null; layout: string | null }[];
  for (const r of srows) found.set(r.rowid, shown(r.marked, r.text, r.attribute, r.layout === null ? [] : (JSON.parse(r.layout) as string[])));
  return chosen.map((c) => {
    const hit = found.get(c.rowid);
    const { snippet, highlights } = unmark(hit?.marked ?? '');
    return { object: c.object, id: c.id, attribute: hit?.attribute ?? '', score: c.score, snippet, highlights };
  });
}
