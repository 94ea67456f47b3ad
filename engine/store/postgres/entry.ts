import pg from 'pg';
import type { Store } from '../types.js';

/**
 * How engine/store/open.ts reaches the PostgreSQL backend. Until the backend's store is
 * wired in (engine/store/postgres/ of issue 15's backend part), this checks that the
 * database can be reached and logged in to — so `--database` already fails the way it must
 * for a wrong URL, host or password — and then refuses to start.
 */
/** Whether openPostgres opens a store yet (the test suite's PostgreSQL project runs only then). */
export const POSTGRES_STORE_READY: boolean = false;

export async function openPostgres(options: { url: string; filesDir: string }): Promise<Store> {
  const client = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: 10_000 });
  // A refused connection is also emitted as 'error'; the rejected connect() reports it.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => undefined);
  }
  throw new Error('this build has no PostgreSQL backend yet (only the SQLite one): start without --database');
}
