import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startServeProcess } from '../api/serve-process.js';
import { createTestDatabase } from '../support/postgres-db.js';

/**
 * `serve --database-connections <n>`: the most PostgreSQL connections one process opens, both
 * of its pools together — what a team sizes against max_connections or a pooler. A real serve
 * process on the run's cluster under concurrent clients, its connections counted in
 * pg_stat_activity while they run. (Refusals and the variable: serve-database.test.ts.)
 */
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/**
 * Runs `work` while counting the server's connections to `database` every few milliseconds;
 * resolves with the most seen at once.
 */
async function peakConnections(adminUrl: string, database: string, work: () => Promise<void>): Promise<number> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  let peak = 0;
  let done = false;
  const watch = (async () => {
    while (!done) {
      const r = await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'schemasync'", [database]);
      peak = Math.max(peak, r.rows[0].n as number);
      await new Promise((res) => setTimeout(res, 3));
    }
  })();
  try {
    await work();
  } finally {
    done = true;
    await watch;
    await c.end();
  }
  return peak;
}

/** 60 requests at once: single creates (the lone-statement pool), bulk creates and searches (the main one). */
async function busy(baseUrl: string, apiKey: string): Promise<void> {
  const call = async (method: string, path: string, body?: unknown): Promise<void> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  await call('POST', '/schema/objects', { name: 'deal', attributes: [{ name: 'title', type: 'text' }, { name: 'amount', type: 'number' }] });
  await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0
        ? call('POST', '/records/deal', { title: `deal ${i}`, amount: i })
        : i % 3 === 1
          ? call('POST', '/records/deal/bulk-create', { records: Array.from({ length: 50 }, (_, j) => ({ title: `bulk ${i}.${j}`, amount: j })) })
          : call('POST', '/records/deal/search', { limit: 20 }),
    ),
  );
}

describe('serve --database-connections (PostgreSQL)', () => {
  it('holds the process to n connections under concurrent clients, and a larger n opens more', async () => {
    const runWith = async (n: number): Promise<{ peak: number; banner: string; rows: number }> => {
      const db = await createTestDatabase('conns');
      const data = mkdtempSync(join(tmpdir(), 'schemasync-conns-'));
      dirs.push(data);
      const s = await startServeProcess(data, ['--database', db.url, '--database-connections', String(n), '--quiet', '--no-studio']);
      try {
        const admin = new URL(db.url);
        admin.pathname = '/postgres';
        const peak = await peakConnections(admin.toString(), db.name, () => busy(s.baseUrl, s.ownerKey));
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        const rows = (await c.query('SELECT count(*)::int AS n FROM r_deal')).rows[0].n as number;
        await c.end();
        return { peak, banner: s.stdout(), rows };
      } finally {
        s.stop();
        await db.drop();
      }
    };
    const two = await runWith(2);
    expect(two.banner).toMatch(/database: postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/conns_\w+ \(up to 2 connections\)/);
    // Every request answered (20 creates + 20 bulk creates of 50), through two connections at most.
    expect(two.rows).toBe(20 + 20 * 50);
    expect(two.peak).toBeGreaterThanOrEqual(1);
    expect(two.peak).toBeLessThanOrEqual(2);
    const eight = await runWith(8);
    expect(eight.rows).toBe(20 + 20 * 50);
    expect(eight.peak).toBeGreaterThan(2);
    expect(eight.peak).toBeLessThanOrEqual(8);
  });
});
