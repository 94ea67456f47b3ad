import type { StoredObject } from '../../model/stored.js';
import { tableIdent } from '../sql/idents.js';
import type { Db } from './database.js';
import { intColumn } from '../sql/rows.js';
import { currentLayout, indexRows, insertTrigger, insertTriggerSql, removeRows, requireRowids, RowIds, type Prepare, type Selection } from './fulltext.js';

// A bulk write's share of the search index (fulltext.ts): one pass per batch instead of a
// trigger run per record and attribute.

/**
 * Hold back the UPDATE trigger of the object `gate` names (a bulk insert takes its trigger
 * down instead, bulkInsertIndex) until the returned function is called. The gate is a row of `_ss_search_gate`, written and deleted inside the caller's
 * write transaction, so it cannot leak:
 * - to another connection: no one reads uncommitted rows, the row is gone before COMMIT, and
 *   another writer waits on BEGIN IMMEDIATE meanwhile (database.ts writeTransaction);
 * - past a failure: a write that throws before releasing rolls its transaction or savepoint
 *   back (every store write is one, core.ts `tx`), and the gate row goes with it, so later
 *   writes (in the same outer transaction too, after a caught failure) see live triggers.
 * Holding a gate already held would hide the inner writes from the outer pass: a bug, refused.
 */
function hold(db: Db, prepare: Prepare, gate: string): () => void {
  if (!db.inTransaction) throw new Error('the search index gate needs a write transaction');
  if (prepare('INSERT INTO _ss_search_gate (object) VALUES (?) ON CONFLICT DO NOTHING').run(gate).changes === 0) {
    throw new Error(`the search index gate ${gate} is held already`);
  }
  return () => void prepare('DELETE FROM _ss_search_gate WHERE object = ?').run(gate);
}

/** A bulk write's index maintenance: begun before its statements, finished right after them. */
export interface BulkIndex {
  finish(): void;
}

const NOTHING: BulkIndex = { finish: () => {} };

/**
 * A bulk insert into `o`'s table, which inserts exactly the records `ids` names between this
 * call and `finish()` (or throws). Its AFTER INSERT trigger is taken down meanwhile and put
 * back by `finish`, which then indexes the batch in one pass (10,000 records: 10,000 trigger
 * runs → 3 statements). Taken down, not gated: a trigger whose WHEN turns it off still runs
 * per row, ~5 ms per 10,000 inserts of a ~30 ms loop on a database file (the DROP and CREATE
 * cost ~0.3 ms together). Both are DDL inside the caller's write transaction: a failure rolls
 * them back with the rows (a savepoint's rollback included), and no other connection sees
 * the table without its trigger (nobody reads uncommitted schema; another writer waits on
 * BEGIN IMMEDIATE). The statement cache is kept: no table's columns change, and SQLite
 * prepares each cached statement again on its next run after any schema change, so the
 * batch's INSERT runs without the trigger and the next single create with it. A trigger a
 * push took down (fulltext-schema.ts TriggerBatch) stays down. The batch is the rows above the
 * table's largest rowid before it (SQLite numbers new rows max + 1, and no other row reaches
 * the table meanwhile: this transaction holds the write lock and only the caller inserts),
 * counted to be sure, with the id list as the fallback. One record keeps the trigger: it
 * costs less.
 */
export function bulkInsertIndex(db: Db, o: StoredObject, ids: readonly string[], prepare: Prepare): BulkIndex {
  if (ids.length < 2) return NOTHING;
  const layout = currentLayout(prepare, o);
  if (!layout || layout.attrs.length === 0) return NOTHING;
  if (!db.inTransaction) throw new Error('a bulk insert indexes inside its write transaction');
  const table = tableIdent(o.name);
  const floor = intColumn(prepare(`SELECT COALESCE(MAX(_rowid_), 0) AS n FROM ${table}`).get(), 'n');
  requireRowids(floor + ids.length);
  const trigger = insertTrigger(o.name);
  const standing = prepare("SELECT 1 AS x FROM sqlite_schema WHERE type = 'trigger' AND name = ?").get(trigger.name) !== undefined;
  if (standing) db.exec(`DROP TRIGGER ${trigger.ident}`);
  return {
    finish: () => {
      if (standing) db.exec(insertTriggerSql(o, layout));
      const above = intColumn(prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE _rowid_ > ?`).get(floor), 'n');
      const base = RowIds.base(layout.code);
      // The batch's rows are the ids above the floor's, up to the end of the object's range.
      const sel: Selection =
        above === ids.length
          ? { records: 'r._rowid_ > ? AND ', recordParams: [floor], ids: 'id > ? AND id < ?', idParams: [base + floor, RowIds.range(layout.code).params[1]] }
          : listed(table, base, ids);
      indexRows(prepare, o, layout, sel);
    },
  };
}

/** The records `ids` names (a bulk write's fallback, and a bulk update's batch). */
function listed(table: string, base: number, ids: readonly string[]): Selection {
  const list = JSON.stringify(ids);
  const batch = 'SELECT value FROM json_each(?)';
  return { records: `r.id IN (${batch}) AND `, recordParams: [list], ids: `id IN (SELECT ${base} + _rowid_ FROM ${table} WHERE id IN (${batch}))`, idParams: [list] };
}

/**
 * A bulk update of the records `ids` names, between this call and `finish()`. When it writes a
 * text-like attribute (`writesText`) the triggers are gated off meanwhile, and `finish`
 * re-indexes the batch's rows from the table as the writes left them, as the update trigger
 * would have row by row. An update of other attributes fires no trigger and needs nothing.
 */
export function bulkUpdateIndex(db: Db, o: StoredObject, ids: readonly string[], writesText: boolean, prepare: Prepare): BulkIndex {
  if (ids.length < 2 || !writesText) return NOTHING;
  const layout = currentLayout(prepare, o);
  if (!layout || layout.attrs.length === 0) return NOTHING;
  const release = hold(db, prepare, o.name);
  return {
    finish: () => {
      release();
      const sel = listed(tableIdent(o.name), RowIds.base(layout.code), ids);
      for (const sql of removeRows(sel.ids)) prepare(sql).run(...sel.idParams);
      indexRows(prepare, o, layout, sel);
    },
  };
}
