import { dirname, join } from 'node:path';
import { BlobStore } from './blobs.js';
import type { Backend } from './port.js';
import { openPostgresBackend } from './postgres/backend.js';
import { poolSizes } from './postgres/connections.js';
import { openCore } from './sql/open.js';
import { SqlStore, type FilesOptions } from './sql/store.js';
import { openSearchIndexNow, sqliteBackend } from './sqlite/backend.js';
import type { SqliteDriver } from './sqlite/driver.js';
import { maskDatabaseUrl } from './postgres/connect-error.js';
import type { Store } from './types.js';

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
  const files = filesOptions(options.filesDir ?? join(dirname(options.path), 'files'), options);
  openSearchIndexNow(backend.driver.db, options.notice);
  const store = SqlStore.open(backend, { path: options.path, ...(files ? { files } : {}), open: () => Promise.resolve() });
  return { store, driver: backend.driver, db: backend.driver.db };
}

/**
 * Any backend (the PostgreSQL one, issue 15): set up on open, then the same Store. With
 * `filesDir`, files and documents too: their rows in the backend's database (its setup makes
 * the tables), their bytes in that folder.
 */
export async function openBackendStore(
  backend: Backend,
  options: { path: string; filesDir?: string | false; maxUploadBytes?: number; notice?: (line: string) => void },
): Promise<Store> {
  const files = filesOptions(options.filesDir ?? false, options);
  const store = SqlStore.open(backend, { path: options.path, ...(files ? { files } : {}), open: (core) => openCore(core, options.notice) });
  await store.ready();
  return store;
}

/**
 * The PostgreSQL store (issue 15, contract.md §8): the same Store over a pool on `url`. The
 * first transaction sets an empty database up, or brings an older layout forward
 * (engine/store/postgres/setup.ts); a database that cannot be reached or refuses the login
 * fails here with the driver's error (classify: 'unavailable'). File bytes live under
 * `filesDir`, a folder every process on the database shares (contract.md §8).
 */
export async function openPostgresStore(options: {
  url: string;
  /** The most connections this process opens, both pools together (postgres/connections.ts). */
  connections?: number;
  filesDir?: string | false;
  maxUploadBytes?: number;
  notice?: (line: string) => void;
}): Promise<Store> {
  const backend = openPostgresBackend({ url: options.url, ...poolSizes(options.connections) });
  try {
    // `path` names where the data lives in messages: never the password.
    return await openBackendStore(backend, {
      path: maskDatabaseUrl(options.url),
      filesDir: options.filesDir ?? false,
      ...(options.maxUploadBytes === undefined ? {} : { maxUploadBytes: options.maxUploadBytes }),
      ...(options.notice ? { notice: options.notice } : {}),
    });
  } catch (err) {
    await backend.driver.close().catch(() => {});
    throw err;
  }
}

/** The files part of a store: bytes under `dir` (contract.md §3), none when `dir` is false. */
function filesOptions(dir: string | false, options: { maxUploadBytes?: number; notice?: (line: string) => void }): FilesOptions | undefined {
  if (dir === false) return undefined;
  return {
    blobs: new BlobStore(dir),
    ...(options.maxUploadBytes === undefined ? {} : { maxUploadBytes: options.maxUploadBytes }),
    ...(options.notice ? { notice: options.notice } : {}),
  };
}
