import { dirname, join } from 'node:path';
import { BlobStore } from './blobs.js';
import type { Backend } from './port.js';
import { openPostgresBackend } from './postgres/backend.js';
import { maskDatabaseUrl } from './postgres/connect-error.js';
import { PostgresRateCounter } from './postgres/rate-counter.js';
import { openCore } from './sql/open.js';
import { SqlStore, type FilesPart } from './sql/store.js';
import { openSearchIndexNow, sqliteBackend } from './sqlite/backend.js';
import { classifySqliteError, type SqliteDriver } from './sqlite/driver.js';
import { FilesEngine } from './sqlite/files.js';
import type { RateCounter, Store } from './types.js';

/**
 * The store's entry point (architecture.md "The backend port"): the backend-neutral Store
 * (engine/store/sql/store.ts) over a backend (engine/store/port.ts Backend). Today the
 * embedded SQLite backend (engine/store/sqlite/); nothing outside engine/store/<backend>/
 * knows which one runs.
 */
export type { Store } from './types.js';
export type { Backend } from './port.js';
export { STATEMENT_CACHE_SIZE } from './sqlite/driver.js';
/** Rules the routes apply before calling the store. */
export { requireKeyRole } from './sql/keys.js';
export { viewNotFound } from './sql/views.js';
export { roleNotFound } from './sql/roles.js';

export interface OpenStoreOptions {
  path: string;
  /** Folder for file bytes (contract.md §3 "Files"): default `<dir of path>/files`; false: no files API. */
  filesDir?: string | false;
  maxUploadBytes?: number;
  /** Where the store says what it did on open (the search index rebuilt); default stderr. */
  notice?: (line: string) => void;
}

/**
 * The SQLite store (issue 3 "Store"): one database file, WAL, one transaction per write.
 * The file is opened (and its meta tables made) before this returns, so a data folder that
 * cannot be written fails here; the search index check runs before the first call.
 */
export function openStore(options: OpenStoreOptions): Store {
  return openSqliteStore(options).store;
}

/**
 * openStore with the SQLite parts a test of the backend reaches: the driver (its statement
 * cache) and the connection (to look at the file as SQLite stores it).
 */
export function openSqliteStore(options: OpenStoreOptions): { store: SqlStore; driver: SqliteDriver; db: SqliteDriver['db'] } {
  const backend = sqliteBackend(options.path);
  let files: FilesPart | undefined;
  if (options.filesDir !== false) {
    const blobs = new BlobStore(options.filesDir ?? join(dirname(options.path), 'files'));
    const engine = new FilesEngine(backend.driver.db, blobs, undefined, {
      ...(options.maxUploadBytes === undefined ? {} : { maxUploadBytes: options.maxUploadBytes }),
      serial: (fn) => backend.driver.serial(fn),
    });
    files = sqliteFiles(engine, backend.driver.serial.bind(backend.driver));
  }
  openSearchIndexNow(backend.driver.db, options.notice);
  const store = SqlStore.open(backend, { path: options.path, ...(files ? { files } : {}), open: () => Promise.resolve() });
  return { store, driver: backend.driver, db: backend.driver.db };
}

/**
 * Any backend (the PostgreSQL one, issue 15): set up on open, then the same Store. No files
 * API yet on other backends (the files module is being moved over the port).
 */
export async function openBackendStore(backend: Backend, options: { path: string; notice?: (line: string) => void }): Promise<Store> {
  const store = SqlStore.open(backend, { path: options.path, open: (core) => openCore(core, options.notice) });
  await store.ready();
  return store;
}

/**
 * The PostgreSQL store (issue 15, contract.md §8): the same Store over a pool on `url`. The
 * first transaction sets an empty database up, or brings an older layout forward
 * (engine/store/postgres/setup.ts); a database that cannot be reached or refuses the login
 * fails here with the driver's error (classify: 'unavailable'), the pool closed. It carries
 * the rate-limit counter every process on the database shares. No files API yet (see above).
 */
export async function openPostgresStore(options: { url: string; max?: number; notice?: (line: string) => void }): Promise<Store> {
  const backend = openPostgresBackend({ url: options.url, ...(options.max === undefined ? {} : { max: options.max }) });
  let store: Store;
  try {
    // `path` names where the data lives in messages: never the password.
    store = await openBackendStore(backend, { path: maskDatabaseUrl(options.url), ...(options.notice ? { notice: options.notice } : {}) });
  } catch (err) {
    await backend.driver.close().catch(() => {});
    throw err;
  }
  const rateCounter: RateCounter = new PostgresRateCounter(backend.driver);
  // The Store's optional member (engine/store/types.ts), set before anyone holds the store.
  Object.defineProperty(store, 'rateCounter', { value: rateCounter, enumerable: true });
  return store;
}

/**
 * Whether a failure to open the store is about writing where the data lives (permission,
 * read-only), classified by the backend so the server reads no vendor error code.
 */
export function isUnwritableStoreError(err: unknown): boolean {
  return classifySqliteError(err) === 'unwritable';
}

/**
 * The SQLite files engine as the store's files part: its sync reads run in the driver's
 * queue; the uploads and document writes run in the store's transactions (`attach`).
 */
function sqliteFiles(engine: FilesEngine, serial: <T>(fn: () => T) => Promise<T>): FilesPart {
  const sync = (fn: () => void): Promise<void> => {
    fn();
    return Promise.resolve();
  };
  return {
    hooks: {
      applyDocumentValues: (_tx, records, object, slots, actor) => engine.applyDocumentValues(records, object, slots, actor),
      deleteRecordDocuments: (_tx, object, ids) => sync(() => engine.deleteRecordDocuments(object, ids)),
      deleteSchemaDocuments: (_tx, object, attribute) => sync(() => engine.deleteSchemaDocuments(object, attribute)),
      renameSchemaSlot: (_tx, object, from, to) => sync(() => engine.renameSchemaSlot(object, from, to)),
      renameSchemaObject: (_tx, from, to) => sync(() => engine.renameSchemaObject(from, to)),
      flushReleases: () => engine.flushReleases(),
    },
    api(transaction) {
      engine.attach(transaction);
      return {
        uploadFile: (input, actor) => engine.uploadFile(input, actor),
        uploadDocument: (target, input, actor) => engine.uploadDocument(target, input, actor),
        getFile: (id) => serial(() => engine.getFile(id)),
        openFile: (id) => serial(() => engine.openFile(id)),
        renameFile: (id, name, actor) => serial(() => engine.renameFile(id, name, actor)),
        deleteFile: (id, actor) => serial(() => engine.deleteFile(id, actor)),
        getDocument: (id) => serial(() => engine.getDocument(id)),
        renameDocument: (id, title) => serial(() => engine.renameDocument(id, title)),
        deleteDocument: (id, actor) => engine.deleteDocument(id, actor),
      };
    },
  };
}
