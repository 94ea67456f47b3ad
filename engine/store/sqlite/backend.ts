import { toObjects, type AttributeRow, type ObjectRow } from '../sql/catalog-rows.js';
import { tableIdent } from '../sql/idents.js';
import { indexNotice } from '../sql/open.js';
import { intColumn } from '../sql/rows.js';
import type { Backend, Executor, FulltextPort, SchemaDdl } from '../port.js';
import { CODECS } from './codecs.js';
import { writeTransaction } from './database.js';
import { addColumn, changeColumns, changeColumnType, dropColumn, renameColumn } from './columns.js';
import { createRecordTable, dropRecordTable, renameRecordTable, syncIndex } from './ddl.js';
import { sqliteDialect } from './dialect.js';
import { SqliteDriver } from './driver.js';
import { ensureDocumentTriggers, ensureSearchIndex } from './fulltext.js';
import {
  afterAttributeChange,
  afterObjectRename,
  beforeAlterTable,
  beforeSchemaChange,
  dropObjectIndex,
  endTriggerBatch,
  newTriggerBatch,
  type TriggerBatch,
} from './fulltext-schema.js';
import { bulkInsertIndex, bulkUpdateIndex } from './fulltext-bulk.js';
import { textAttributes } from '../sql/search-layout.js';
import { runFulltext } from './fulltext-query.js';
import { catchUp, PendingIndex } from './fulltext-pending.js';
import { IndexMerger } from './fulltext-merge.js';

/**
 * The embedded backend (engine/store/port.ts Backend) over one better-sqlite3 file.
 *
 * Its DDL and search-index upkeep are SQLite-only code that runs synchronously on the one
 * connection: inside a transaction that connection IS the transaction (the driver's queue
 * holds it from BEGIN IMMEDIATE to COMMIT, driver.ts), so the `tx` these members receive
 * and the `db` they use are the same session. The index is kept by triggers (fulltext.ts),
 * so the record-write hooks have nothing to do.
 */
export function sqliteBackend(path: string): Backend & { driver: SqliteDriver } {
  const driver = new SqliteDriver(path);
  const db = driver.db;
  // DDL re-reads the schema: statements prepared before it are prepared again (driver.ts).
  // A call that ran none (a batched push's trigger upkeep, an index that stays absent) keeps
  // them: the schema cookie, which every DDL statement bumps, says whether any ran.
  const cookie = db.prepare('PRAGMA schema_version').pluck();
  const ddl = (fn: () => void): Promise<void> => {
    const before = cookie.get();
    fn();
    if (cookie.get() !== before) driver.clearStatements();
    return Promise.resolve();
  };
  // The push running schemaBatch, if any. One per backend is enough: its transaction holds
  // the connection's queue from BEGIN to COMMIT (driver.ts), so no other call's hooks run
  // while it is set, and it is cleared whether the push commits or throws.
  let batch: TriggerBatch | undefined;
  // The index's statements of a bulk write and of a search, from the driver's cache (fulltext.ts Prepare).
  const prepare = (sql: string) => driver.stmt(sql);
  const schema: SchemaDdl = {
    createRecordTable: (_tx, object, attributes) => ddl(() => createRecordTable(db, object, attributes)),
    dropRecordTable: (_tx, object) => ddl(() => dropRecordTable(db, object)),
    renameRecordTable: (_tx, from, to) =>
      ddl(() => {
        beforeAlterTable(db, from, batch);
        renameRecordTable(db, from, to);
      }),
    addColumn: (_tx, object, spec) => ddl(() => addColumn(db, object, spec, alter(object))),
    dropColumn: (_tx, object, attributeId, name) => ddl(() => dropColumn(db, object, attributeId, name, alter(object))),
    renameColumn: (_tx, object, from, to) => ddl(() => renameColumn(db, object, from, to, alter(object))),
    syncIndex: (_tx, object, attributeId, spec, fresh) => ddl(() => syncIndex(db, object, attributeId, spec, fresh)),
    changeColumnType: (_tx, object, attributeId, from, to) => ddl(() => changeColumnType(db, object, attributeId, from, to, alter(object))),
    changeColumns: (_tx, object, changes) => ddl(() => changeColumns(db, object, changes, alter(object))),
  };
  // Column DDL that ALTERs the table first takes down search triggers a push left standing (fulltext-schema.ts TriggerBatch).
  const alter = (object: string) => (): void => beforeAlterTable(db, object, batch);
  const sync = (fn: () => void): Promise<void> => {
    fn();
    return Promise.resolve();
  };
  // Between searches, what single writes left waiting for FTS5 is applied 100 ms after a commit.
  const pending = new PendingIndex(db, (fn) => driver.serial(fn), () => catchUp(db, prepare));
  // FTS5's segments are merged once the writes pause, not inside them (fulltext-merge.ts).
  const merger = new IndexMerger(db, (fn) => driver.serial(fn));
  driver.afterCommit = () => {
    pending.afterCommit();
    merger.afterCommit();
  };
  merger.soon();
  const fulltext: FulltextPort = {
    ensure: (_tx, objects) => {
      const built = ensureSearchIndex(db, objects);
      if (!built) ensureDocumentTriggers(db);
      return Promise.resolve(built);
    },
    beforeSchemaChange: (_tx, object) => ddl(() => beforeSchemaChange(db, object, batch)),
    afterAttributeChange: (_tx, o, oldName, newName) => ddl(() => afterAttributeChange(db, o, oldName, newName, batch)),
    schemaBatch: async (_tx, fn) => {
      if (batch) return fn();
      const mine: TriggerBatch = (batch = newTriggerBatch());
      try {
        const out = await fn();
        await ddl(() => endTriggerBatch(db, mine));
        return out;
      } finally {
        batch = undefined;
      }
    },
    afterObjectRename: (_tx, from, o) => ddl(() => afterObjectRename(db, from, o, batch)),
    dropObject: (_tx, object) => ddl(() => dropObjectIndex(db, object, batch)),
    // A single record is indexed by its table's triggers; a batch in one pass (fulltext.ts).
    beginWrite: (_tx, o, write) => {
      const index =
        write.kind === 'create'
          ? bulkInsertIndex(db, o, write.ids, prepare)
          : bulkUpdateIndex(db, o, write.ids, textAttributes(o).some((a) => write.attributes.includes(a.name)), prepare);
      return Promise.resolve({ finish: () => sync(() => index.finish()) });
    },
    // What single writes left waiting for FTS5 is applied before the search reads (fulltext-pending.ts).
    query: (_ex, input) =>
      new Promise((resolve) => {
        catchUp(db, prepare);
        resolve(runFulltext(prepare, input));
      }),
  };
  return {
    name: 'sqlite',
    driver,
    dialect: sqliteDialect,
    codecs: CODECS,
    ddl: schema,
    fulltext,
    // openDatabase (database.ts) created the meta tables when the driver opened the file.
    setup: () => Promise.resolve(),
    // Moves on every commit by another connection (never this one's): another process changed the schema, perhaps.
    catalogToken: (ex: Executor) => ex.get<{ data_version: number }>('PRAGMA data_version').then((r) => r?.data_version),
  };
}


/**
 * What opening does on SQLite (engine/store/sql/open.ts openCore, the same steps), run
 * synchronously before the store is handed out. A second store on the same file in the same
 * process (tests, a CLI inside a server's process) would otherwise block the thread on the
 * write lock while this one holds it across an await: the busy wait can never end.
 */
export function openSearchIndexNow(db: SqliteDriver['db'], notice: ((line: string) => void) | undefined): void {
  const say = notice ?? ((line: string) => void process.stderr.write(`${line}\n`));
  writeTransaction(db, () => {
    const objects = [...toObjects(
      db.prepare('SELECT * FROM _ss_objects ORDER BY position, name').all() as ObjectRow[],
      db.prepare('SELECT * FROM _ss_attributes ORDER BY system DESC, position').all() as AttributeRow[],
    ).values()];
    const had = (db.prepare("SELECT value FROM _ss_meta WHERE key = 'search_layout'").get() as { value: string } | undefined)?.value;
    if (!ensureSearchIndex(db, objects)) {
      ensureDocumentTriggers(db);
      return;
    }
    // Counted only for the notice, so only after a rebuild (COUNT(*) reads every table).
    const records = objects.reduce((n, o) => n + intColumn(db.prepare(`SELECT COUNT(*) AS n FROM ${tableIdent(o.name)}`).get(), 'n'), 0);
    const line = indexNotice(had, records, objects.length);
    if (line) say(line);
  });
}
