import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../support/postgres-db.js';

describe('the PostgreSQL test cluster', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('gives each file its own empty UTF-8 database, byte-order collation, over TCP with a password', async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const r = await c.query<{ db: string; enc: string; coll: string; tables: string }>(
        "SELECT current_database() AS db, pg_encoding_to_char(encoding) AS enc, datcollate AS coll, (SELECT count(*) FROM pg_tables WHERE schemaname = 'public') AS tables FROM pg_database WHERE datname = current_database()",
      );
      expect(r.rows[0]).toEqual({ db: db.name, enc: 'UTF8', coll: 'C', tables: '0' });
    } finally {
      await c.end();
    }
  });

  it('refuses a wrong password (host connections are not trusted)', async () => {
    const u = new URL(inject('postgresUrl'));
    u.password = 'wrong';
    const c = new pg.Client({ connectionString: u.toString() });
    await expect(c.connect()).rejects.toMatchObject({ code: '28P01' });
  });
});
