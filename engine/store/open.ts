import { openPostgresStore, openStore } from './index.js';
import { describeConnectFailure, parseDatabaseUrl, DatabaseUnavailableError } from './postgres/connect-error.js';
import { classifyPostgresError } from './postgres/driver.js';
import type { Store } from './types.js';

export { maskDatabaseUrl, parseDatabaseUrl } from './postgres/connect-error.js';

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
    return await openPostgresStore({ url: url.url, filesDir: location.filesDir });
  } catch (err) {
    throw describeConnectFailure(url, err) ?? err;
  }
}

/**
 * Whether a failure means the database cannot be reached right now (down, restarting,
 * refusing connections): the server answers a masked 503 rather than a 500. Asked of the
 * backend's own classification, so the server reads no vendor error code.
 */
export function isUnavailableStoreError(err: unknown): boolean {
  return classifyPostgresError(err) === 'unavailable';
}
