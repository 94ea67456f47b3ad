import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { databaseUrl } from './postgres.js';

/**
 * A fresh, empty database on the run's test cluster (postgres-global.ts) for one test file
 * or one test: its URL, and `drop()` to remove it (ending any connection still open on it).
 */
export async function createTestDatabase(prefix = 't'): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const admin = inject('postgresUrl');
  if (!admin) throw new Error('no PostgreSQL test cluster: run through vitest (vitest.config.ts globalSetup)');
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withAdmin(admin, (c) => c.query(`CREATE DATABASE "${name}"`));
  return {
    url: databaseUrl(admin, name),
    name,
    drop: () => withAdmin(admin, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

async function withAdmin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}
