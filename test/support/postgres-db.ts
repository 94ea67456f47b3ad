import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { PostgresDriver } from '../../engine/store/postgres/driver.js';
import { databaseUrl } from './postgres.js';

/**
 * A fresh, empty database on the run's test cluster (postgres-global.ts) for one test file
 * or one test: its URL, and `drop()` to remove it (ending any connection still open on it).
 */
export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(prefix = 't'): Promise<TestDatabase> {
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

/**
 * In a describe block: a fresh database and a driver on it for the block's tests, closed and
 * dropped after them. Read `driver`/`db` inside tests (they exist once beforeAll ran).
 */
export function usePostgresDriver(prefix: string, max = 2): { readonly driver: PostgresDriver; readonly db: TestDatabase } {
  let db: TestDatabase | undefined;
  let driver: PostgresDriver | undefined;
  beforeAll(async () => {
    db = await createTestDatabase(prefix);
    driver = new PostgresDriver({ url: db.url, max });
  });
  afterAll(async () => {
    await driver?.close();
    await db?.drop();
  });
  return {
    get driver() {
      if (!driver) throw new Error('usePostgresDriver: read driver inside a test or hook');
      return driver;
    },
    get db() {
      if (!db) throw new Error('usePostgresDriver: read db inside a test or hook');
      return db;
    },
  };
}
