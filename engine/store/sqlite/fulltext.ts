import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import { tableIdent } from '../sql/idents.js';
import type { Db } from './database.js';

/**
 * The cross-object full-text index (contract.md §3 "Cross-object search").
 *
 * Layout: `_ss_search` holds one row per (record, text-like attribute) with its text, and
 * one per document (its title, under the record and attribute it sits in); `_ss_fts` is an
 * FTS5 index over that text (external content, so snippets read the text from
 * `_ss_search`), tokenized with `unicode61 remove_diacritics 2` (case and accents fold).
 *
 * Exactness: the index is written only by SQL triggers and by the schema hooks below, all
 * inside the transaction of the write that changes the text, so a commit that changes a
 * record also changes its index rows and a rollback undoes both. No path can skip it:
 * - record writes (create, update, bulk, delete, the relation cascades, a default backfill):
 *   AFTER INSERT/UPDATE/DELETE triggers on each record table (`objectTriggers`), so every
 *   statement that touches a row, whichever code path issues it, re-indexes that row;
 * - document titles (upload, rename, slot moves, deletes): triggers on `_ss_documents`;
 * - `_ss_fts` follows `_ss_search` by triggers on `_ss_search` (the FTS5 external-content
 *   pattern), so the two never disagree;
 * - schema changes: the store calls `beforeSchemaChange` before its DDL (a dropped column
 *   must not be named by a trigger) and `afterAttributeChange` / `afterObjectRename` /
 *   `dropObjectIndex` after it, in the same transaction, so the triggers always name the
 *   current text-like attributes and the rows of an attribute that changed are rebuilt
 *   from the table as it now is.
 * Concurrency: SQLite serialises write transactions (BEGIN IMMEDIATE), and a reader sees a
 * snapshot in which record tables and the index agree, because they commit together.
 */

/** Bumped when the layout below changes: an older (or no) layout is rebuilt on start. */
export const SEARCH_LAYOUT = 1;

const TEXT_LIKE = new Set(['text', 'email', 'url', 'select', 'multiselect']);
export const isTextLike = (a: AttributeSpec): boolean => TEXT_LIKE.has(a.type);

const TABLES_SQL = `
CREATE TABLE _ss_search (
  id INTEGER PRIMARY KEY,
  object TEXT NOT NULL,
  record_id TEXT NOT NULL,
  attribute TEXT NOT NULL,
  document_id TEXT,
  text TEXT NOT NULL
);
CREATE INDEX _ss_search_record ON _ss_search(object, record_id);
CREATE INDEX _ss_search_attribute ON _ss_search(object, attribute);
CREATE INDEX _ss_search_document ON _ss_search(document_id) WHERE document_id IS NOT NULL;
CREATE VIRTUAL TABLE _ss_fts USING fts5(text, content='_ss_search', content_rowid='id', tokenize='unicode61 remove_diacritics 2', prefix='2 3 4');
CREATE TRIGGER _ss_search_ai AFTER INSERT ON _ss_search BEGIN
  INSERT INTO _ss_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER _ss_search_ad AFTER DELETE ON _ss_search BEGIN
  INSERT INTO _ss_fts(_ss_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER _ss_search_au AFTER UPDATE OF text ON _ss_search BEGIN
  INSERT INTO _ss_fts(_ss_fts, rowid, text) VALUES ('delete', old.id, old.text);
  INSERT INTO _ss_fts(rowid, text) VALUES (new.id, new.text);
END;
`;

const DOCUMENT_TRIGGERS_SQL = `
CREATE TRIGGER _ss_search_doc_ai AFTER INSERT ON _ss_documents BEGIN
  INSERT INTO _ss_search(object, record_id, attribute, document_id, text) VALUES (new.object, new.record_id, new.attribute, new.id, new.title);
END;
CREATE TRIGGER _ss_search_doc_ad AFTER DELETE ON _ss_documents BEGIN
  DELETE FROM _ss_search WHERE document_id = old.id;
END;
CREATE TRIGGER _ss_search_doc_au AFTER UPDATE ON _ss_documents BEGIN
  DELETE FROM _ss_search WHERE document_id = old.id;
  INSERT INTO _ss_search(object, record_id, attribute, document_id, text) VALUES (new.object, new.record_id, new.attribute, new.id, new.title);
END;
`;

/** A SQL string literal; names come validated (engine/model/names.ts), quoting is belt and braces. */
const lit = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/** The indexed text of a column: a multiselect's options joined, any other text as is. */
function textExpr(a: AttributeSpec, row: string): string {
  const col = `${row}.${sqlIdent(a.name)}`;
  return a.type === 'multiselect' ? `(SELECT group_concat(value, ', ') FROM json_each(${col}))` : col;
}

/** Trigger names derive from the table's (validated) name, so one object has one set. */
const triggerIdent = (object: string, event: string): string => `"_ss_search_${event}_${tableIdent(object).slice(1)}`;

/** One INSERT … SELECT per text-like attribute of `o`, reading the row `row` (NEW in a trigger). */
function insertRows(o: StoredObject, attrs: readonly AttributeSpec[], row: string, from: string): string[] {
  return attrs.map((a) => {
    const t = textExpr(a, row);
    return `INSERT INTO _ss_search(object, record_id, attribute, text) SELECT ${lit(o.name)}, ${row}.id, ${lit(a.name)}, ${t} FROM ${from} WHERE ${t} IS NOT NULL AND ${t} <> ''`;
  });
}

const textAttributes = (o: StoredObject): AttributeSpec[] => o.attributes.filter((a) => !a.system && isTextLike(a));

export function dropObjectTriggers(db: Db, object: string): void {
  for (const e of ['ai', 'au', 'ad']) db.exec(`DROP TRIGGER IF EXISTS ${triggerIdent(object, e)}`);
}

/** The record table's triggers for its current text-like attributes (none: no triggers). */
function objectTriggers(db: Db, o: StoredObject): void {
  dropObjectTriggers(db, o.name);
  const attrs = textAttributes(o);
  if (attrs.length === 0) return;
  const table = tableIdent(o.name);
  // One row read per statement: `FROM (SELECT 1)` gives the trigger's NEW a row to select from.
  const inserts = insertRows(o, attrs, 'new', '(SELECT 1)').map((s) => `${s};`).join('\n  ');
  const del = `DELETE FROM _ss_search WHERE object = ${lit(o.name)} AND record_id = old.id AND document_id IS NULL;`;
  db.exec(`CREATE TRIGGER ${triggerIdent(o.name, 'ai')} AFTER INSERT ON ${table} BEGIN\n  ${inserts}\nEND`);
  db.exec(`CREATE TRIGGER ${triggerIdent(o.name, 'ad')} AFTER DELETE ON ${table} BEGIN\n  ${del}\nEND`);
  // Only a change of an indexed column re-indexes (a relation or number update costs nothing here).
  const cols = attrs.map((a) => sqlIdent(a.name)).join(', ');
  db.exec(`CREATE TRIGGER ${triggerIdent(o.name, 'au')} AFTER UPDATE OF ${cols} ON ${table} BEGIN\n  ${del}\n  ${inserts}\nEND`);
}

/** Index the stored values of some attributes of `o` (all its text-like ones by default). */
function fillAttributes(db: Db, o: StoredObject, attrs: readonly AttributeSpec[]): void {
  for (const s of insertRows(o, attrs, 'r', `${tableIdent(o.name)} AS r`)) db.exec(s);
}

/** Before DDL on an object's table: no trigger may name a column about to go. */
export function beforeSchemaChange(db: Db, object: string): void {
  dropObjectTriggers(db, object);
}

/**
 * After an object was created or one of its attributes added, changed, renamed or dropped
 * (`o` as it is now): the rows of the attribute under its old name go, the rows under its
 * new name are rebuilt from the table, and the triggers are made again.
 */
export function afterAttributeChange(db: Db, o: StoredObject, oldName: string | undefined, newName: string | undefined): void {
  for (const n of new Set([oldName, newName])) {
    if (n !== undefined) db.prepare('DELETE FROM _ss_search WHERE object = ? AND attribute = ? AND document_id IS NULL').run(o.name, n);
  }
  const now = newName === undefined ? undefined : o.attributes.find((a) => a.name === newName);
  if (now && !now.system && isTextLike(now)) fillAttributes(db, o, [now]);
  // Document titles follow their slot by the _ss_documents triggers (the files engine moves
  // or deletes the rows itself); the record triggers name only record columns.
  objectTriggers(db, o);
}

export function afterObjectRename(db: Db, from: string, o: StoredObject): void {
  dropObjectTriggers(db, from);
  db.prepare('UPDATE _ss_search SET object = ? WHERE object = ?').run(o.name, from);
  objectTriggers(db, o);
}

export function dropObjectIndex(db: Db, object: string): void {
  dropObjectTriggers(db, object);
  db.prepare('DELETE FROM _ss_search WHERE object = ?').run(object);
}

/**
 * On open (inside the caller's write transaction): build the index when it is missing or
 * of an older layout; otherwise nothing. Returns whether it was built (the caller says so).
 */
export function ensureSearchIndex(db: Db, objects: Iterable<StoredObject>): boolean {
  const row = db.prepare("SELECT value FROM _ss_meta WHERE key = 'search_layout'").get() as { value: string } | undefined;
  const hasTable = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = '_ss_fts'").get() !== undefined;
  if (row && Number(row.value) === SEARCH_LAYOUT && hasTable) return false;
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
  db.exec('DROP TABLE IF EXISTS _ss_search');
  db.exec(TABLES_SQL);
  const hasDocuments = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = '_ss_documents'").get() !== undefined;
  if (hasDocuments) {
    db.exec(DOCUMENT_TRIGGERS_SQL);
    db.exec('INSERT INTO _ss_search(object, record_id, attribute, document_id, text) SELECT object, record_id, attribute, id, title FROM _ss_documents');
  }
  for (const o of objects) {
    fillAttributes(db, o, textAttributes(o));
    objectTriggers(db, o);
  }
}

/** The documents table appeared after the index (a store opened with files later): add its triggers. */
export function ensureDocumentTriggers(db: Db): void {
  const has = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'trigger' AND name = '_ss_search_doc_ai'").get() !== undefined;
  const docs = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = '_ss_documents'").get() !== undefined;
  if (has || !docs) return;
  db.exec(DOCUMENT_TRIGGERS_SQL);
  db.exec('DELETE FROM _ss_search WHERE document_id IS NOT NULL');
  db.exec('INSERT INTO _ss_search(object, record_id, attribute, document_id, text) SELECT object, record_id, attribute, id, title FROM _ss_documents');
}
