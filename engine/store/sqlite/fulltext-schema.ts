import type { StoredObject } from '../../model/stored.js';
import { holdsTextSql } from '../sql/search-rows.js';
import { sqliteDialect } from './dialect.js';
import { keptLayout, layoutAttributes, noteLayoutChange, pendingLayout, type PendingLayout } from '../sql/search-layout.js';
import type { Db } from './database.js';
import { direct, dropObjectTriggers, objectTriggers, rebuildObjectRows, removeRecordRows, removeRows, RowIds, storedLayout, writeLayout } from './fulltext.js';

// The search index (fulltext.ts) through schema changes: which rows a change makes stale,
// when they are rebuilt, and the record triggers made again for the object as it now is.

/**
 * The objects of a push whose triggers are down (FulltextPort.schemaBatch), by name: as the
 * last hook left them, or null between beforeSchemaChange and the hook after the DDL. Each
 * DDL statement scans the whole `sqlite_schema`, whose 3 triggers per object make it large
 * (a 1,000-object schema: ~1.4 MB of trigger SQL); dropping and making the triggers once per
 * object and push instead of per attribute change saves six such statements per change, and
 * an object's rows are rebuilt at most once per push, however many of its attributes change.
 *
 * `standing`: objects whose triggers beforeSchemaChange left in place, because the DDL that
 * follows may take them for free: a table rebuild (sqlite/columns.ts) drops the table, and
 * its triggers with it, in the one scan DROP TABLE makes anyway, where dropping them first
 * costs three more scans. An ALTER TABLE needs them gone first (DROP COLUMN refuses a column
 * a trigger names): the backend calls beforeAlterTable right before each. Standing triggers
 * name the table's columns as they were; they are gated meanwhile (beforeSchemaChange), so
 * a push step's record writes (a default's backfill) fire no re-indexing: the batch's end
 * rebuilds the rows of each object whose indexed attributes changed, from the table, drops
 * whatever triggers still stand, and makes them again.
 */
export interface TriggerBatch {
  objects: Map<string, StoredObject | null>;
  standing: Set<string>;
  pending: Map<string, PendingLayout>;
}

export const newTriggerBatch = (): TriggerBatch => ({ objects: new Map(), standing: new Set(), pending: new Map() });

/** Before DDL on an object's table: no trigger may name a column about to go (in a batch: see TriggerBatch). */
export function beforeSchemaChange(db: Db, object: string, batch?: TriggerBatch): void {
  if (!batch) {
    dropObjectTriggers(db, object);
    return;
  }
  if (batch.objects.has(object)) return; // down (or standing) since an earlier change of this push
  batch.objects.set(object, null);
  batch.standing.add(object);
  // Standing, but gated (the bulk writes' gate, fulltext-bulk.ts): a push step's record writes
  // (a default's backfill) would re-index each row they touch, and the batch's end rebuilds
  // the rows that changed anyway (50,000 rows: 1.8 s against 0.36 s). A row of this
  // transaction, gone at the batch's end or with a rollback.
  db.prepare('INSERT INTO _ss_search_gate (object) VALUES (?) ON CONFLICT DO NOTHING').run(object);
}

/** Right before an ALTER TABLE of the object's table: triggers left standing go now. */
export function beforeAlterTable(db: Db, object: string, batch?: TriggerBatch): void {
  if (batch?.standing.delete(object)) dropObjectTriggers(db, object);
}

function pendingOf(db: Db, object: string, batch: TriggerBatch | undefined): PendingLayout {
  const known = batch?.pending.get(object);
  if (known) return known;
  const p = pendingLayout(storedLayout(direct(db), object)?.names);
  batch?.pending.set(object, p);
  return p;
}

/** Whether any record of `o` has text in attribute `name` (a multiselect: any option). */
function holdsText(db: Db, o: StoredObject, name: string): boolean {
  const sql = holdsTextSql(sqliteDialect, o, name);
  return sql !== undefined && db.prepare(sql).get() !== undefined;
}

/** Bring `o`'s rows, layout and triggers to `o` as it now is (sql/search-layout.ts keptLayout says whether its rows stay). */
function settle(db: Db, o: StoredObject, p: PendingLayout): void {
  const kept = keptLayout(p, o);
  if (!kept || kept.mustBeEmpty.some((n) => holdsText(db, o, n))) {
    objectTriggers(db, o, rebuildObjectRows(db, o));
    return;
  }
  // A kept layout has its code already (its rows are written by it); an appended name only lengthens it.
  const code = kept.mustBeEmpty.length > 0 ? writeLayout(db, o.name, kept.layout) : storedLayout(direct(db), o.name)?.code;
  objectTriggers(db, o, code === undefined ? undefined : { code, attrs: layoutAttributes(o, kept.layout) });
}

/**
 * After an object was created or one of its attributes added, changed, renamed or dropped
 * (`o` as it is now): what that makes stale is noted, and settled now or, in a batch, once at
 * its end. A change of an indexed attribute (its name, type, values) rebuilds the object's
 * rows: the hook is not told whether the values changed. Document titles follow their slot by
 * the _ss_documents triggers (the files engine moves or deletes the rows itself); the record
 * rows name only record columns.
 */
export function afterAttributeChange(db: Db, o: StoredObject, oldName: string | undefined, newName: string | undefined, batch?: TriggerBatch): void {
  const p = pendingOf(db, o.name, batch);
  noteLayoutChange(p, o, oldName, newName);
  if (batch) batch.objects.set(o.name, o);
  else settle(db, o, p);
}

/** The end of a push's schema changes: each touched object settled, its triggers made once. */
export function endTriggerBatch(db: Db, batch: TriggerBatch): void {
  // Every gate beforeSchemaChange set (under the names objects had then: a rename moves on).
  // No bulk write shares a push's transaction, so no other gate is held.
  db.prepare('DELETE FROM _ss_search_gate').run();
  for (const [name, o] of batch.objects) {
    // Every DDL path pairs beforeSchemaChange with a hook after it; an object left without
    // its triggers would go unindexed, so the push fails (and rolls back) instead.
    if (!o) throw new Error(`the search triggers of ${name} were dropped and not made again`);
    // objectTriggers drops any still standing (DROP TRIGGER IF EXISTS: no scan for one that is gone).
    settle(db, o, pendingOf(db, name, batch));
  }
}

export function afterObjectRename(db: Db, from: string, o: StoredObject, batch?: TriggerBatch): void {
  dropObjectTriggers(db, from);
  const p = batch?.pending.get(from);
  batch?.objects.delete(from);
  batch?.standing.delete(from);
  batch?.pending.delete(from);
  // Record rows name their object by its code, which the layout row carries to the new name;
  // document rows follow `_ss_documents.object` through its update trigger.
  db.prepare('UPDATE _ss_search_layout SET object = ? WHERE object = ?').run(o.name, from);
  if (p) batch?.pending.set(o.name, p);
  if (batch) batch.objects.set(o.name, o);
  else settle(db, o, pendingOf(db, o.name, undefined));
}

export function dropObjectIndex(db: Db, object: string, batch?: TriggerBatch): void {
  batch?.objects.delete(object);
  batch?.standing.delete(object);
  batch?.pending.delete(object);
  dropObjectTriggers(db, object);
  removeRecordRows(db, object);
  // Its documents' rows go with their `_ss_documents` rows; any left are taken here too.
  for (const sql of removeRows(`${RowIds.documents} AND object = ?`)) db.prepare(sql).run(object);
  writeLayout(db, object, []);
}
