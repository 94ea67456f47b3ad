import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/backend.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres-db.js';
import { startServeProcess, type ServeProcess } from './serve-process.js';

/**
 * A single create in one statement on PostgreSQL (engine/store/sql/lone-create.ts,
 * engine/store/postgres/lone-insert.ts) against pushes through another process: creates keep
 * coming through one `serve` process while another applies pushes that change what a valid
 * row is, and no row checked against the schema before a push is stored after it. Two real
 * processes on one database, driven over HTTP; the stored rows are read with plain SQL.
 */

interface Answer {
  status: number;
  body: any;
}

async function call(p: ServeProcess, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(p.baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${p.ownerKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Concurrent create loops through `p` until `stop()`; every answer counted by status. */
function createLoops(p: ServeProcess, loops: number, body: (n: number) => Record<string, unknown>) {
  let running = true;
  let n = 0;
  const statuses = new Map<number, number>();
  const failures: any[] = [];
  const done = Promise.all(
    Array.from({ length: loops }, async () => {
      while (running) {
        const a = await call(p, 'POST', '/records/w', body(n++));
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        if (a.status !== 201) failures.push(a.body);
      }
    }),
  );
  return {
    statuses,
    failures,
    async stop() {
      running = false;
      await done;
    },
  };
}

describe.skipIf(!onPostgres())('single creates in one statement while another process pushes', () => {
  let creates: ServeProcess;
  let pushes: ServeProcess;
  let db: TestDatabase;
  let sql: pg.Client;
  let dataDir = '';
  const attributes: Record<string, unknown> = { name: { type: 'text', required: true }, num: { type: 'text' } };
  const push = (extra: Record<string, unknown>, allowDestructive = false) => {
    Object.assign(attributes, extra);
    return call(pushes, 'PUT', '/schema/sources/race', { declaration: { objects: { w: { attributes } } }, allowDestructive });
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'schemasync-lone-'));
    db = await createTestDatabase('lone');
    const args = ['--database', db.url, '--quiet', '--no-studio'];
    creates = await startServeProcess(dataDir, args);
    pushes = await startServeProcess(dataDir, args);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    expect((await push({})).status).toBe(200);
  }, 90_000);
  afterAll(async () => {
    await sql?.end();
    creates?.stop();
    pushes?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const count = async (where: string): Promise<number> => Number((await sql.query(`SELECT count(*) AS n FROM r_w WHERE ${where}`)).rows[0].n);

  it('a required attribute with a default added by a push: no record created meanwhile is left without it', async () => {
    // The push backfills the rows its snapshot sees; a row inserted after that snapshot and
    // checked against the schema before the push would keep NULL (READ COMMITTED did here).
    const load = createLoops(creates, 12, (n) => ({ name: `r${n}`, num: String(n % 100) }));
    try {
      for (let round = 0; round < 8; round++) {
        await new Promise((r) => setTimeout(r, 40));
        const pushed = await push({ [`flag${round}`]: { type: 'text', required: true, default: 'd' } });
        expect(pushed.status, JSON.stringify(pushed.body)).toBe(200);
      }
    } finally {
      await load.stop();
    }
    expect(load.failures.slice(0, 5)).toEqual([]);
    expect(load.statuses.get(201)).toBeGreaterThan(100);
    for (let round = 0; round < 8; round++) expect(await count(`"flag${round}" IS NULL`), `flag${round}`).toBe(0);
    expect(await count('true')).toBe(load.statuses.get(201));
  }, 120_000);

  it('a push that narrows a text attribute to integer: every stored value is an integer, and every 201 a row', async () => {
    const before = await count('true');
    const load = createLoops(creates, 12, (n) => ({ name: `t${n}`, num: String(n % 100) }));
    let pushed: Answer;
    try {
      await new Promise((r) => setTimeout(r, 100));
      pushed = await push({ num: { type: 'integer' } }, true);
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await load.stop();
    }
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(200);
    // The bodies send `num` as text: valid before the push, refused after it (an integer is a
    // JSON number) — and nothing else.
    for (const f of load.failures) expect(f).toMatchObject({ code: 'SCHEMA_VALIDATION_FAILED', errors: [{ path: ['num'], message: 'num must be an integer' }] });
    expect(load.statuses.get(201)).toBeGreaterThan(0);
    const type = (await sql.query("SELECT data_type FROM information_schema.columns WHERE table_name = 'r_w' AND column_name = 'num'")).rows[0].data_type;
    expect(type).toBe('bigint');
    expect(await count('true')).toBe(before + (load.statuses.get(201) ?? 0));
    expect(await count('num IS NULL OR num < 0 OR num > 99')).toBe(0);
  }, 120_000);
});
