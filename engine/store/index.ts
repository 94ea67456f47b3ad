import { QueuedStore } from './facade.js';
import { SqliteStore, type OpenStoreOptions } from './sqlite/core.js';
import { classifySqliteError } from './sqlite/driver.js';
import type { Store } from './types.js';

/**
 * The store's entry point (architecture.md "The backend port"): the backend-neutral Store
 * (engine/store/types.ts) over a backend. Today the embedded SQLite backend
 * (engine/store/sqlite/); nothing outside engine/store/<backend>/ knows which one runs.
 */
export type { Store } from './types.js';
export type { OpenStoreOptions } from './sqlite/core.js';
/** The SQLite backend's synchronous core, for tests of its caches and data probe. */
export { SqliteStore } from './sqlite/core.js';
export { STATEMENT_CACHE_SIZE } from './sqlite/driver.js';
/** Rules the routes apply before calling the store. */
export { requireKeyRole } from './sqlite/keys.js';
export { viewNotFound } from './sqlite/views.js';
export { roleNotFound } from './sqlite/roles.js';

/** The SQLite store (issue 3 "Store"): one database file, WAL, one transaction per write. */
export function openStore(options: OpenStoreOptions): Store {
  const core = new SqliteStore(options);
  return QueuedStore.open(core, core.driver);
}

/**
 * Whether a failure to open the store is about writing where the data lives (permission,
 * read-only), classified by the backend so the server reads no vendor error code.
 */
export function isUnwritableStoreError(err: unknown): boolean {
  return classifySqliteError(err) === 'unwritable';
}
