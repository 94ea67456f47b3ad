import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import { sqlLiteral as lit, tableIdent } from '../sql/idents.js';
import { emptyRecordText, recordText } from '../sql/search-rows.js';
import { sqliteDialect } from './dialect.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';
import { layoutAttributes, parseLayout, textAttributes } from '../sql/search-layout.js';
import { intColumn } from '../sql/rows.js';
import { addWaiting, forgetRows, markPending, PENDING_TABLES, PENDING_TABLES_SQL } from './fulltext-pending.js';
import { applyMergeSettings } from './fulltext-merge.js';

/**
 * The cross-object full-text index (contract.md §3 "Cross-object search").
 *
 * Layout: `_ss_search` holds one row per record that has any indexed text: the text of each
 * text-like attribute (a multiselect's options joined), one after the other in the order
 * `_ss_search_layout` lists for the object, each followed by a separator token (SEPARATOR) but
 * the last; and one row per document (its title, under the record and attribute it sits in).
 * `_ss_fts` is an FTS5 index over that text (external content, so snippets read the text from
 * `_ss_search`), tokenized with `unicode61 remove_diacritics 2` (case and accents fold). One
 * row per record, not per attribute: FTS5 pays per row it indexes about as much as for the
 * words in it, so three attributes in one row cost ~45% of three rows (10,000 records × 3
 * attributes: 74 ms → 33 ms of index write and commit). A query finds the record's row; the
 * attribute of a hit is the segment its matches fall in (fulltext-query.ts).
 *
 * A row's id says whose it is, so a record's row holds its text and nothing else (RowIds): a
 * record's row is `code × 2^32 + rowid`, its object's code (`_ss_search_layout.code`) and the
 * record's rowid in its table; a document's is its `_ss_documents` rowid, below 2^32, and only
 * document rows fill `object`, `record_id`, `attribute`. The rows of one object are one range
 * of ids and one record's row is found by its primary key: no secondary index to keep, and a
 * batch's ids ascend, so its rows and their FTS5 entries append to the last pages. Against the
 * layout before (object, record id and rowid in every row, an index on two of them) a
 * 10,000-record batch writes its rows in 9.6 ms instead of 14 and commits in 2.3 instead of
 * 3.4. A hit's record id is read from its table by rowid (fulltext-query.ts), for the page only.
 *
 * Exactness: the index is written only by SQL triggers and by the schema hooks
 * (fulltext-schema.ts), all inside the transaction of the write that changes the text, so a
 * commit that changes a record also changes its index rows and a rollback undoes both. (FTS5's
 * side of a single write, the entry added or deleted, is applied when the next search, or a
 * timer 100 ms after the commit, catches up: fulltext-pending.ts says why and why no search
 * can tell.) No path can skip it:
 * - record writes (create, update, bulk, delete, the relation cascades, a default backfill):
 *   AFTER INSERT/UPDATE/DELETE triggers on each record table (`objectTriggers`), so every
 *   statement that touches a row, whichever code path issues it, re-indexes that row;
 * - document titles (upload, rename, slot moves, deletes): triggers on `_ss_documents`;
 * - `_ss_fts` (external content over `_ss_search`) is written by the same statements' partners:
 *   every write to `_ss_search`, trigger or function, is paired with the FTS5 insert or
 *   'delete' of the same rows (`ftsAdd` / `removeRows`), now or at the next catch-up
 *   (`markPending` / `forgetRows`), and nothing outside these files writes `_ss_search`. No
 *   trigger on `_ss_search` itself: a trigger runs per row even when a WHEN clause turns it
 *   off, ~10 ms per 30,000 rows of a bulk write;
 * - schema changes: the store calls `beforeSchemaChange` before its DDL (a dropped column
 *   must not be named by a trigger) and `afterAttributeChange` / `afterObjectRename` /
 *   `dropObjectIndex` after it, in the same transaction, so the triggers always name the
 *   current text-like attributes in the layout's order, and the rows of an object whose
 *   indexed attributes changed are rebuilt from the table as it now is (fulltext-schema.ts).
 * Bulk writes (bulkInsertIndex, bulkUpdateIndex) gate their object's triggers off and index the
 * batch's rows in one set-based pass instead (see fulltext-bulk.ts `hold` for why the gate cannot leak); a bulk
 * delete keeps the trigger, whose per-row indexed delete is what a set-based one would do.
 * Concurrency: SQLite serialises write transactions (BEGIN IMMEDIATE), and a reader sees a
 * snapshot in which record tables, the layout and the index agree, because they commit together.
 *
 * A record's row is found by its rowid in its table, not by its UUID: a batch's rowids ascend,
 * so its index entries append to the index's last page instead of landing on random pages
 * (37 ms → 18 ms CPU for 10,000 records × 3 attributes). The rowid of a record table (TEXT
 * PRIMARY KEY, implicit rowid) is stable: no write moves a row (no REPLACE), a table rebuild
 * copies `_rowid_` (columns.ts), and VACUUM keeps the rowids of a table that has an index,
 * which every record table has (its primary key's); `_ss_documents` likewise.
 */

/**
 * Bumped when the layout below changes: an older (or no) layout is rebuilt on start.
 * 3: `record_rowid` and its index replace the (object, record_id) and (object, attribute)
 * indexes; the gate table; no triggers on `_ss_search` (2 had them, gated).
 * 4: one row per record (its attributes' text joined) and `_ss_search_layout`, not one per attribute.
 * 5: a row's id says whose it is (RowIds); record rows hold only their text; objects have codes.
 * 6: `_ss_search_pending` and `_ss_search_gone`: single writes leave FTS5's side to the next search (fulltext-pending.ts).
 */
export const SEARCH_LAYOUT = 6;

/**
 * The ids of `_ss_search` rows (and of their FTS5 entries): an object's records take the range
 * `[code × SPAN, (code + 1) × SPAN)`, a record the id `code × SPAN + rowid`; documents take
 * their `_ss_documents` rowid, below SPAN (code 0 is never given). A rowid at or past SPAN
 * would land in the next object's range: the triggers and the bulk pass refuse it (4 billion
 * rows in one table, far past what this store is for). Codes stay under MAX_CODE, so every id
 * is a safe integer in JS (2^21 × 2^32 = 2^53).
 */
const SHIFT = 32;
const SPAN = 2 ** SHIFT;
const MAX_CODE = 2 ** 21 - 1;
const TOO_FAR = 'a rowid past 2^32 does not fit the search index';
export const RowIds = {
  /** The first id of object `code`'s range (its records' rowids are added to it). */
  base: (code: number): number => code * SPAN,
  /** The record rowid an id holds (a record row's id; a document's id is its own rowid). */
  rowid: (id: number): number => id % SPAN,
  /** The code of the object a row id belongs to, in SQL (0 for a document's row). */
  codeSql: (id: string): string => `(${id} >> ${SHIFT})`,
  /** The where clause (over `_ss_search.id`) of every record row of object `code`, with its two parameters. */
  range: (code: number): { where: string; params: number[] } => ({ where: 'id >= ? AND id < ?', params: [code * SPAN, (code + 1) * SPAN] }),
  /** Document rows, whatever their object. */
  documents: `id < ${SPAN}`,
};

const TABLES_SQL = `
CREATE TABLE _ss_search (
  id INTEGER PRIMARY KEY,
  object TEXT,
  record_id TEXT,
  attribute TEXT,
  text TEXT NOT NULL
);
CREATE TABLE _ss_search_gate (object TEXT PRIMARY KEY) STRICT, WITHOUT ROWID;
CREATE TABLE _ss_search_layout (object TEXT PRIMARY KEY, code INTEGER NOT NULL UNIQUE, attributes TEXT NOT NULL) STRICT, WITHOUT ROWID;
CREATE VIRTUAL TABLE _ss_fts USING fts5(text, content='_ss_search', content_rowid='id', tokenize='unicode61 remove_diacritics 2', prefix='2 3 4');
${PENDING_TABLES_SQL}
`;

/*
 * SEPARATOR, between two attributes' text in a record's row: U+E000, a private-use character, which
 * unicode61 takes for a word of its own (it counts the Co category as token characters), so
 * it holds a position and a quoted phrase never runs from one attribute into the next. No
 * query can match it: a query's terms need a letter or digit, and the character is taken out
 * of queries (sql/search-text.ts queryTerms) and of the indexed values (sql/search-rows.ts `recordText`), so splitting a row's
 * text at it gives back each attribute's text exactly.
 */

/** The FTS5 entries of the `_ss_search` rows `where` selects: added after the rows are written. */
const ftsAdd = (where: string): string => `INSERT INTO _ss_fts(rowid, text) SELECT id, text FROM _ss_search WHERE ${where}`;

/**
 * Removing `_ss_search` rows: their FTS5 entries left to delete, with the text they were indexed
 * with, which the rows still hold (fulltext-pending.ts `forgetRows`), then the rows. Each
 * statement names `where` once, so all take the same parameters.
 */
export const removeRows = (where: string): string[] => [...forgetRows(where), `DELETE FROM _ss_search WHERE ${where}`];

/** Refuses a rowid that would leave its range (RowIds); one statement of a trigger. */
const refuseFar = (row: string): string => `SELECT RAISE(ABORT, '${TOO_FAR}') WHERE ${row}._rowid_ >= ${SPAN};`;
const addDocument = `${refuseFar('new')}
  INSERT INTO _ss_search(id, object, record_id, attribute, text) VALUES (new._rowid_, new.object, new.record_id, new.attribute, new.title);
  ${markPending('id = new._rowid_')};`;
const removeDocument = removeRows('id = old._rowid_').map((sql) => `${sql};`).join('\n  ');
/** Every document's row, written from `_ss_documents` (a build, or its triggers added late). */
const allDocuments = `INSERT INTO _ss_search(id, object, record_id, attribute, text) SELECT _rowid_, object, record_id, attribute, title FROM _ss_documents`;

const DOCUMENT_TRIGGERS_SQL = `
CREATE TRIGGER _ss_search_doc_ai AFTER INSERT ON _ss_documents BEGIN
  ${addDocument}
END;
CREATE TRIGGER _ss_search_doc_ad AFTER DELETE ON _ss_documents BEGIN
  ${removeDocument}
END;
CREATE TRIGGER _ss_search_doc_au AFTER UPDATE ON _ss_documents BEGIN
  ${removeDocument}
  ${addDocument}
END;
`;

/** Trigger names derive from the table's (validated, so unescaped) name, so one object has one set. */
const triggerName = (object: string, event: string): string => `_ss_search_${event}_${tableIdent(object).slice(1, -1)}`;
const triggerIdent = (object: string, event: string): string => `"${triggerName(object, event)}"`;

/** The layout an object's rows are written by: its code (RowIds) and its text attributes in order. */
export interface Layout {
  code: number;
  attrs: AttributeSpec[];
}

/**
 * The INSERT … SELECT of the rows of the records of `o` that `from` and `where` (a prefix of a
 * WHERE clause, or '') select, reading each as `row` (NEW in a trigger): one per record that
 * has any text. `_rowid_`, never `rowid`: an attribute may be named `rowid` and would hide
 * SQLite's (columns.ts); no attribute name starts with `_`.
 */
function insertRows(layout: Layout, row: string, from: string, where = ''): string {
  const { code, attrs } = layout;
  return `INSERT INTO _ss_search(id, text) SELECT ${RowIds.base(code)} + rrowid, t FROM (SELECT ${row}._rowid_ AS rrowid, ${recordText(sqliteDialect, attrs, row)} AS t FROM ${from} WHERE ${where}1) WHERE t <> ${emptyRecordText(attrs)}`;
}

/** The row of the record `row` (OLD or NEW in a trigger), by its id. */
const recordRow = (layout: Layout, row: string): string => `id = ${RowIds.base(layout.code)} + ${row}._rowid_`;

export function dropObjectTriggers(db: Db, object: string): void {
  for (const e of ['ai', 'au', 'ad']) db.exec(`DROP TRIGGER IF EXISTS ${triggerIdent(object, e)}`);
}

/** The record table's triggers for `layout` (none without one, or with no attributes). */
export function objectTriggers(db: Db, o: StoredObject, layout: Layout | undefined): void {
  dropObjectTriggers(db, o.name);
  if (!layout || layout.attrs.length === 0) return;
  const table = tableIdent(o.name);
  const del = removeRows(recordRow(layout, 'old')).map((s) => `${s};`).join('\n  ');
  db.exec(insertTriggerSql(o, layout));
  db.exec(`CREATE TRIGGER ${triggerIdent(o.name, 'ad')} AFTER DELETE ON ${table} BEGIN\n  ${del}\nEND`);
  // Only a change of an indexed column re-indexes (a relation or number update costs nothing here).
  const cols = layout.attrs.map((a) => sqlIdent(a.name)).join(', ');
  db.exec(`CREATE TRIGGER ${triggerIdent(o.name, 'au')} AFTER UPDATE OF ${cols} ON ${table} ${gateOpen(o)} BEGIN\n  ${del}\n  ${indexInserts(layout)}\nEND`);
}

/** The trigger's statements indexing the record NEW (its FTS5 entry follows: fulltext-pending.ts). One row read per statement: `FROM (SELECT 1)` gives NEW a row to select from. */
const indexInserts = (layout: Layout): string =>
  [refuseFar('new'), `${insertRows(layout, 'new', '(SELECT 1)')};`, `${markPending(recordRow(layout, 'new'))};`].join('\n  ');

/** While a push or a bulk update holds the object's gate, the trigger stands but does nothing (fulltext-bulk.ts, fulltext-schema.ts). */
const gateOpen = (o: StoredObject): string => `WHEN NOT EXISTS (SELECT 1 FROM _ss_search_gate WHERE object = ${lit(o.name)})`;

/** The AFTER INSERT trigger of `o`'s table for `layout` (a bulk insert takes it down and puts it back: fulltext-bulk.ts). */
export function insertTriggerSql(o: StoredObject, layout: Layout): string {
  return `CREATE TRIGGER ${triggerIdent(o.name, 'ai')} AFTER INSERT ON ${tableIdent(o.name)} ${gateOpen(o)} BEGIN\n  ${indexInserts(layout)}\nEND`;
}

/** The name of `o`'s AFTER INSERT trigger as sqlite_schema holds it, and as SQL. */
export const insertTrigger = (object: string): { name: string; ident: string } => ({ name: triggerName(object, 'ai'), ident: triggerIdent(object, 'ai') });

/**
 * Where a bulk write's statements come from: the driver's statement cache (driver.ts `stmt`,
 * emptied after every DDL that can change a table's columns, so a statement never outlives
 * the shape it was prepared for; a bulk insert's trigger DDL keeps it, fulltext-bulk.ts).
 * Each batch runs the same ~8 statements; preparing them afresh (an FTS5 INSERT among them)
 * was ~30 ms of CPU per 100 batches. The schema-change paths, which run once per change,
 * prepare directly. A cached statement is shared with the driver's own calls of the same
 * text: no statement mode (pluck, raw) may be set on one; a value is read by its column.
 */
export type Prepare = (sql: string) => Statement;
export const direct = (db: Db): Prepare => (sql) => db.prepare(sql);

/** An object's layout row as stored: its code and attribute names (none: no layout yet). */
export function storedLayout(prepare: Prepare, object: string): { code: number; names: string[] } | undefined {
  const row = prepare('SELECT code, attributes FROM _ss_search_layout WHERE object = ?').get(object) as { code?: unknown; attributes?: unknown } | undefined;
  if (row === undefined) return undefined;
  return { code: intColumn(row, 'code'), names: parseLayout(object, row.attributes) };
}

/** The layout `o`'s rows are written by now (for a bulk write's pass); undefined when it has none. */
export function currentLayout(prepare: Prepare, o: StoredObject): Layout | undefined {
  const stored = storedLayout(prepare, o.name);
  return stored && { code: stored.code, attrs: layoutAttributes(o, stored.names) };
}

/**
 * Write `object`'s layout (none: its row goes; the caller removed its rows first) and return
 * its code: the one it has, or the next free one. A code is given back only with the layout
 * row, after the object's rows are gone, so a code never names another object's rows.
 */
export function writeLayout(db: Db, object: string, names: readonly string[]): number | undefined {
  if (names.length === 0) {
    db.prepare('DELETE FROM _ss_search_layout WHERE object = ?').run(object);
    return undefined;
  }
  const row = db
    .prepare(
      'INSERT INTO _ss_search_layout (object, code, attributes) VALUES (?, (SELECT COALESCE(MAX(code), 0) + 1 FROM _ss_search_layout), ?) ' +
        'ON CONFLICT(object) DO UPDATE SET attributes = excluded.attributes RETURNING code',
    )
    .get(object, JSON.stringify(names));
  const code = intColumn(row, 'code');
  if (code > MAX_CODE) throw new Error(`the search index has no code left for ${object}: delete _ss_meta.search_layout to rebuild it`);
  return code;
}

/** Refuses a batch whose rowids would leave their range (RowIds). */
export function requireRowids(top: number): void {
  if (top >= SPAN) throw new Error(TOO_FAR);
}

/**
 * Which records a pass indexes, said twice: over the record table `r` (a prefix of a WHERE
 * clause, with its parameters) and over the ids of the rows that adds (a WHERE clause over
 * `_ss_search`, with its own), so the FTS5 entries are added for exactly those rows.
 */
export interface Selection {
  records: string;
  recordParams: unknown[];
  ids: string;
  idParams: unknown[];
}

/**
 * Index the records `sel` selects by `layout`: one INSERT … SELECT into `_ss_search`, then one
 * into the FTS table for the rows that added.
 */
export function indexRows(prepare: Prepare, o: StoredObject, layout: Layout, sel: Selection): void {
  if (layout.attrs.length === 0) return;
  prepare(insertRows(layout, 'r', `${tableIdent(o.name)} AS r`, sel.records)).run(...sel.recordParams);
  addNow(prepare, sel.ids, sel.idParams);
}

/**
 * FTS5 entries added in this pass for the `_ss_search` rows `where` selects (a bulk write's, a
 * rebuild's). What single writes left waiting goes first, so an id's old entry is deleted
 * before a new one is added under it (fulltext-pending.ts), in this pass's flush.
 */
function addNow(prepare: Prepare, where: string, params: readonly unknown[] = []): void {
  addWaiting(prepare);
  prepare(ftsAdd(where)).run(...params);
}

/** Every record of object `code`. */
const everyRecord = (code: number): Selection => {
  const range = RowIds.range(code);
  return { records: '', recordParams: [], ids: range.where, idParams: range.params };
};

/** Every record row of `object` (by the code its layout holds) and their FTS5 entries; its layout row stays. */
export function removeRecordRows(db: Db, object: string): void {
  const stored = storedLayout(direct(db), object);
  if (!stored) return;
  const range = RowIds.range(stored.code);
  for (const sql of removeRows(range.where)) db.prepare(sql).run(...range.params);
}

/**
 * The rows of `o`'s records made again from its table by its current text attributes (in
 * their order, which becomes the layout), after a change of what it indexes: the layout, or
 * undefined when nothing of `o` is indexed any more.
 */
export function rebuildObjectRows(db: Db, o: StoredObject): Layout | undefined {
  removeRecordRows(db, o.name);
  const attrs = textAttributes(o);
  const code = writeLayout(db, o.name, attrs.map((a) => a.name));
  if (code === undefined) return undefined;
  requireRowids(intColumn(db.prepare(`SELECT COALESCE(MAX(_rowid_), 0) AS n FROM ${tableIdent(o.name)}`).get(), 'n'));
  const layout = { code, attrs };
  indexRows(direct(db), o, layout, everyRecord(code));
  return layout;
}

/**
 * On open (inside the caller's write transaction): build the index when it is missing or
 * of an older layout; otherwise nothing. Returns whether it was built (the caller says so).
 */
export function ensureSearchIndex(db: Db, objects: Iterable<StoredObject>): boolean {
  const row = db.prepare("SELECT value FROM _ss_meta WHERE key = 'search_layout'").get() as { value: string } | undefined;
  const hasTable = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = '_ss_fts'").get() !== undefined;
  if (row && Number(row.value) === SEARCH_LAYOUT && hasTable) {
    // Settings kept in the index, not the layout: given on open, with no rebuild (fulltext-merge.ts).
    applyMergeSettings(db);
    // What a process left waiting when it stopped (fulltext-pending.ts).
    addWaiting(direct(db));
    return false;
  }
  rebuildSearchIndex(db, objects);
  db.prepare("INSERT INTO _ss_meta (key, value) VALUES ('search_layout', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(String(SEARCH_LAYOUT));
  return true;
}

function rebuildSearchIndex(db: Db, objects: Iterable<StoredObject>): void {
  const old = db.prepare("SELECT type, name FROM sqlite_schema WHERE name LIKE '\\_ss\\_search%' ESCAPE '\\' OR name LIKE '\\_ss\\_fts%' ESCAPE '\\'").all() as {
    type: string;
    name: string;
  }[];
  for (const t of old.filter((x) => x.type === 'trigger')) db.exec(`DROP TRIGGER IF EXISTS "${t.name.replaceAll('"', '""')}"`);
  db.exec('DROP TABLE IF EXISTS _ss_fts');
  for (const t of ['_ss_search', '_ss_search_gate', '_ss_search_layout', ...PENDING_TABLES]) db.exec(`DROP TABLE IF EXISTS ${t}`);
  db.exec(TABLES_SQL);
  applyMergeSettings(db);
  const hasDocuments = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = '_ss_documents'").get() !== undefined;
  if (hasDocuments) {
    db.exec(DOCUMENT_TRIGGERS_SQL);
    indexDocuments(db);
  }
  for (const o of objects) objectTriggers(db, o, rebuildObjectRows(db, o));
}

/** Every document's row and FTS5 entry, from `_ss_documents` (none there yet). */
function indexDocuments(db: Db): void {
  requireRowids(intColumn(db.prepare('SELECT COALESCE(MAX(_rowid_), 0) AS n FROM _ss_documents').get(), 'n'));
  db.exec(allDocuments);
  addNow(direct(db), RowIds.documents);
}

/** The documents table appeared after the index (a store opened with files later): add its triggers. */
export function ensureDocumentTriggers(db: Db): void {
  const has = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'trigger' AND name = '_ss_search_doc_ai'").get() !== undefined;
  const docs = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = '_ss_documents'").get() !== undefined;
  if (has || !docs) return;
  db.exec(DOCUMENT_TRIGGERS_SQL);
  for (const sql of removeRows(RowIds.documents)) db.exec(sql);
  indexDocuments(db);
}
