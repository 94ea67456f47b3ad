import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/backend.js';
import { databaseUrl, startPostgres, type PostgresCluster } from '../support/postgres.js';
import { startServeProcess, type ServeProcess } from './serve-process.js';

/**
 * Issue 15 "Bad input and faults": the database stopping under load. Two real `serve`
 * processes on a PostgreSQL cluster of this file's own (stopping the run's shared one would
 * break the files running beside it): while it is down every answer is a masked 5xx in the
 * envelope, the processes stay up, and they serve again once it is back.
 */
const MASKED = 'Internal server error';

describe.skipIf(!onPostgres())('the database stopping under load', () => {
  let cluster: PostgresCluster;
  let procs: ServeProcess[] = [];
  let dataDir = '';

  beforeAll(async () => {
    cluster = await startPostgres();
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE fault');
    await admin.end();
    dataDir = mkdtempSync(join(tmpdir(), 'schemasync-fault-'));
    const args = ['--database', databaseUrl(cluster.url, 'fault'), '--quiet', '--no-studio'];
    procs = [await startServeProcess(dataDir, args)];
    procs.push(await startServeProcess(dataDir, args));
  }, 90_000);
  afterAll(() => {
    for (const p of procs) p.stop();
    cluster?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function create(p: ServeProcess, n: number): Promise<{ status: number; body: any }> {
    try {
      const res = await fetch(`${p.baseUrl}/records/item`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.ownerKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ n }),
      });
      return { status: res.status, body: await res.json() };
    } catch (err) {
      // The process itself did not answer: recorded, and the test fails on it below.
      return { status: 0, body: String(err) };
    }
  }

  it('answers masked 503 (or 500) envelopes while it is down, stays up, and recovers', async () => {
    const owner = procs[0]!.ownerKey;
    const push = await fetch(`${procs[0]!.baseUrl}/schema/sources/fault`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ declaration: { objects: { item: { attributes: { n: { type: 'integer' } } } } } }),
    });
    expect(push.status).toBe(200);

    // Load: four writers, two per process, until told to stop.
    type Phase = 'up' | 'down' | 'back';
    let phase = 'up' as Phase;
    // A request in flight when the phase changes (the database stops under it) belongs to
    // neither side: it is kept apart and must only be a clean answer, a 201 or a masked 5xx.
    const seen: Record<Phase | 'straddling', { status: number; body: any }[]> = { up: [], down: [], back: [], straddling: [] };
    let running = true;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let n = 0; running; n++) {
        const at = phase;
        const answer = await create(procs[w % 2]!, n);
        seen[at === phase ? at : 'straddling'].push(answer);
        if (answer.status !== 201) await new Promise((r) => setTimeout(r, 20));
      }
    });
    await new Promise((r) => setTimeout(r, 500));
    phase = 'down';
    cluster.stop();
    await new Promise((r) => setTimeout(r, 1_500));
    cluster.start();
    phase = 'back';
    // Recovered: each process answers a write again (pools reconnect on their own).
    for (const p of procs) {
      await expect.poll(async () => (await create(p, -1)).status, { timeout: 20_000, interval: 200 }).toBe(201);
    }
    running = false;
    await Promise.all(writers);

    expect(seen.up.length).toBeGreaterThan(0);
    expect(seen.up.every((a) => a.status === 201)).toBe(true);
    const failed = seen.down.filter((a) => a.status !== 201);
    expect(failed.length).toBeGreaterThan(0);
    for (const a of [...failed, ...seen.straddling.filter((x) => x.status !== 201)]) {
      // 503 when the driver says the database is unreachable; 500 for a failure it cannot name.
      expect([500, 503]).toContain(a.status);
      expect(a.body).toMatchObject({ success: false, statusCode: a.status, message: MASKED });
    }
    for (const p of procs) expect(p.child.exitCode).toBeNull();
  }, 90_000);
});
