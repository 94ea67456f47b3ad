import { openPostgresStore, openStore } from './index.js';
import { describeConnectFailure, parseDatabaseUrl, DatabaseUnavailableError } from './postgres/connect-error.js';
import type { DbErrorKind } from './port.js';
import { classifyPostgresError } from './postgres/driver.js';
import { classifySqliteError } from './sqlite/driver.js';
import type { Store } from './types.js';

export { maskDatabaseUrl, parseDatabaseUrl } from './postgres/connect-error.js';
export { DEFAULT_CONNECTIONS, MAX_CONNECTIONS, MIN_CONNECTIONS, isConnectionCount } from './postgres/connections.js';

/**
 * Where a server keeps its data (contract.md §4 `serve --data`, §8 `--database`): the
 * SQLite file at `path` unless a PostgreSQL URL is given; file bytes under `filesDir`
 * either way (the folder every process on one database shares).
 */
export interface StoreLocation {
  path: string;
  filesDir: string;
  /** A postgres:// URL (contract.md §8); absent: the embedded SQLite file. */
  database?: string | undefined;
  /** With `database`: the most connections this process opens (postgres/connections.ts); default 20. */
  connections?: number | undefined;
}

/**
 * The one place that picks the backend. A database that cannot be reached or logged in to
 * becomes a DatabaseUnavailableError (masked URL, a hint), anything else is thrown as it is.
 */
export async function openStoreAt(location: StoreLocation): Promise<Store> {
  if (location.database === undefined) return openStore({ path: location.path, filesDir: location.filesDir });
  const url = parseDatabaseUrl(location.database);
  if ('problem' in url) throw new DatabaseUnavailableError(`the database URL ${url.problem}`, 'Pass --database postgres://user:password@host:5432/database.');
  try {
    return await openPostgresStore({ url: url.url, filesDir: location.filesDir, ...(location.connections === undefined ? {} : { connections: location.connections }) });
  } catch (err) {
    throw describeConnectFailure(url, err) ?? err;
  }
}

/**
 * What a store's failure is, as its backend classifies it (engine/store/port.ts
 * DbErrorKind), for the server, which reads no vendor error code: `unavailable` (the
 * database is down or refusing connections) is a masked 503, `unwritable` (the data folder
 * is read-only or not ours) is a data-folder message at start. This is the one place, beside
 * `openStoreAt`, that knows every backend: an error is asked of each in turn, and the vendors'
 * codes do not overlap (SQLite's are SQLITE_*, PostgreSQL's SQLSTATEs and socket errors).
 */
export function storeErrorKind(err: unknown): DbErrorKind {
  const sqlite = classifySqliteError(err);
  return sqlite !== 'other' ? sqlite : classifyPostgresError(err);
}
