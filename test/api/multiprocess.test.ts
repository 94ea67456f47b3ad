import { clearOfMinuteEnd } from '../support/minute-window.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THROTTLE_MESSAGE } from '../../engine/errors.js';
import { onPostgres } from '../support/backend.js';
import { createTestDatabase } from '../support/postgres-db.js';
import { startServeProcess, type ServeProcess } from './serve-process.js';

/**
 * Contract.md §8: any number of `serve` processes on one PostgreSQL database behave as one
 * service. Three real `schemasync serve --database` processes (the built bin) on one
 * database and one shared --data folder, driven over HTTP. PostgreSQL only: a SQLite file
 * belongs to one server (the `sqlite` project skips this file).
 */

interface Answer {
  status: number;
  body: any;
}

async function call(p: ServeProcess, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(p.baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The first process sets the database up and creates the owner key; the others find both. */
async function startThree(dataDir: string, url: string, options: { rateLimit?: boolean } = {}): Promise<ServeProcess[]> {
  const args = ['--database', url, '--quiet', '--no-studio'];
  const first = await startServeProcess(dataDir, args, options);
  const rest = await Promise.all([startServeProcess(dataDir, args, options), startServeProcess(dataDir, args, options)]);
  return [first, ...rest];
}

const declaration = (extra: Record<string, unknown> = {}) => ({
  declaration: {
    objects: {
      counter: { attributes: { n: { type: 'integer' }, code: { type: 'text', unique: true }, ...extra } },
    },
  },
});

describe.skipIf(!onPostgres())('three serve processes on one PostgreSQL database', () => {
  let procs: ServeProcess[] = [];
  let owner = '';
  let dataDir = '';

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'schemasync-multi-'));
    const db = await createTestDatabase('multi');
    procs = await startThree(dataDir, db.url);
    owner = procs[0]!.ownerKey;
  }, 90_000);
  afterAll(() => {
    for (const p of procs) p.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the first start creates the owner key (in the database, credentials under --data); the others use it', async () => {
    expect(procs[0]!.stdout()).toContain('owner API key (shown once)');
    for (const p of procs.slice(1)) {
      expect(p.stdout()).not.toContain('owner API key');
      expect(p.ownerKey).toBe(owner);
    }
    for (const p of procs) expect((await call(p, owner, 'GET', '/schema/objects')).status).toBe(200);
  });

  it("a push through one is seen by the others' very next request", async () => {
    const pushed = await call(procs[0]!, owner, 'PUT', '/schema/sources/multi', declaration());
    expect(pushed.status).toBe(200);
    const created = await call(procs[1]!, owner, 'POST', '/records/counter', { n: 0, code: 'first' });
    expect(created.status).toBe(201);
    // A second push (through another process) adds an attribute; the third writes it at once.
    expect((await call(procs[1]!, owner, 'PUT', '/schema/sources/multi', declaration({ note: { type: 'text' } }))).status).toBe(200);
    const written = await call(procs[2]!, owner, 'POST', '/records/counter', { n: 0, code: 'second', note: 'seen' });
    expect(written.status).toBe(201);
    const objects = (await call(procs[0]!, owner, 'GET', '/schema/objects/counter')).body.data as { attributes: { name: string }[] };
    expect(objects.attributes.map((a) => a.name)).toContain('note');
  });

  it('50 concurrent if-match increments spread over the three lose nothing', async () => {
    const made = await call(procs[0]!, owner, 'POST', '/records/counter', { n: 0, code: 'inc' });
    expect(made.status).toBe(201);
    const id = made.body.data.id as string;
    let conflicts = 0;
    await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const p = procs[i % 3]!;
        for (;;) {
          const got = await call(p, owner, 'GET', `/records/counter/${id}`);
          expect(got.status).toBe(200);
          const { version, values } = got.body.data as { version: number; values: { n: number } };
          const put = await call(p, owner, 'PUT', `/records/counter/${id}`, { n: values.n + 1 }, { 'if-match': `"${version}"` });
          if (put.status === 200) return;
          expect(put.status, JSON.stringify(put.body)).toBe(409);
          expect(put.body.code).toBe('SCHEMA_CONFLICT');
          conflicts++;
        }
      }),
    );
    const final = (await call(procs[2]!, owner, 'GET', `/records/counter/${id}`)).body.data as { version: number; values: { n: number } };
    expect(final.values.n).toBe(50);
    expect(final.version).toBe(51);
    // The processes really raced (else this test proves nothing about if-match across them).
    expect(conflicts).toBeGreaterThan(0);
  }, 120_000);

  it('concurrent bulk-creates through the three never duplicate a unique value', async () => {
    // Six batches of 20 codes, each overlapping the next by 10: every pair of neighbours clashes.
    const batches = Array.from({ length: 6 }, (_, b) => Array.from({ length: 20 }, (_, i) => ({ n: b, code: `u${b * 10 + i}` })));
    const answers = await Promise.all(batches.map((records, b) => call(procs[b % 3]!, owner, 'POST', '/records/counter/bulk-create', { records })));
    let created = 0;
    for (const a of answers) {
      if (a.status === 201) created += (a.body.data.records as unknown[]).length;
      else {
        expect(a.status, JSON.stringify(a.body)).toBe(400);
        expect(a.body.code).toBe('SCHEMA_VALIDATION_FAILED');
      }
    }
    expect(created).toBeGreaterThan(0);
    const stored = await call(procs[1]!, owner, 'POST', '/records/counter/search', { filter: { code: { startsWith: 'u' } }, limit: 500 });
    const codes = (stored.body.data as { values: { code: string } }[]).map((r) => r.values.code);
    expect(codes).toHaveLength(created);
    expect(new Set(codes).size).toBe(codes.length);
  }, 60_000);

  it('one idempotency-key sent at once through the three writes one record, and every answer names it', async () => {
    const body = { n: 4242 };
    const headers = { 'idempotency-key': `multi-${Date.now()}` };
    const answers = await Promise.all(Array.from({ length: 9 }, (_, i) => call(procs[i % 3]!, owner, 'POST', '/records/counter', body, headers)));
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(201);
    const ids = new Set(answers.map((a) => a.body.data.id as string));
    expect(ids.size).toBe(1);
    const stored = await call(procs[1]!, owner, 'POST', '/records/counter/search', { filter: { n: { eq: 4242 } } });
    expect((stored.body.data as { id: string }[]).map((r) => r.id)).toEqual([...ids]);
    // The same key with another body is refused through any of them.
    const other = await call(procs[2]!, owner, 'POST', '/records/counter', { n: 1 }, headers);
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('SCHEMA_CONFLICT');
  }, 60_000);

  it('a key revoked through one is refused by the others within a second', async () => {
    const made = await call(procs[0]!, owner, 'POST', '/keys', { name: 'temp', role: 'member' });
    expect(made.status).toBe(201);
    const { id, secret } = made.body.data as { id: string; secret: string };
    // Each process has now authenticated (and remembered) the key.
    for (const p of procs) expect((await call(p, secret, 'GET', '/schema/objects')).status).toBe(200);
    expect((await call(procs[0]!, owner, 'DELETE', `/keys/${id}`)).status).toBe(200);
    const revokedAt = Date.now();
    for (const p of procs.slice(1)) {
      let status = 0;
      do status = (await call(p, secret, 'GET', '/schema/objects')).status;
      while (status === 200 && Date.now() - revokedAt < 1_000);
      expect(status).toBe(401);
    }
  });

  it('a record linked through one process while another deletes the target never links a missing record', async () => {
    const decl = { declaration: { objects: { org: { attributes: { name: { type: 'text' } } }, person: { attributes: { org: { type: 'relation', target: 'org' } } } } } };
    expect((await call(procs[0]!, owner, 'PUT', '/schema/sources/relations', decl)).status).toBe(200);
    for (let round = 0; round < 25; round++) {
      const org = await call(procs[0]!, owner, 'POST', '/records/org', { name: `o${round}` });
      expect(org.status).toBe(201);
      const orgId = org.body.data.id as string;
      const [created, deleted] = await Promise.all([
        call(procs[1]!, owner, 'POST', '/records/person', { org: orgId }),
        call(procs[2]!, owner, 'DELETE', `/records/org/${orgId}`),
      ]);
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
      if (created.status === 201) {
        // Created first: the delete cleared the link (a single relation becomes null).
        const person = await call(procs[0]!, owner, 'GET', `/records/person/${created.body.data.id as string}`);
        expect(person.body.data.values.org ?? null).toBeNull();
      } else {
        expect(created.status, JSON.stringify(created.body)).toBe(400);
        expect(created.body.code).toBe('SCHEMA_VALIDATION_FAILED');
      }
    }
  }, 60_000);

  // Last in this block: it revokes the owner key the tests above use (one of the two survives).
  it('two full owner keys revoking each other through two processes at once leave one', async () => {
    let survivor = { key: owner, id: '' };
    const keys = (await call(procs[0]!, owner, 'GET', '/keys')).body.data as { id: string; name: string; revokedAt: string | null }[];
    survivor.id = keys.find((k) => k.name === 'owner' && k.revokedAt === null)!.id;
    for (let round = 0; round < 25; round++) {
      const made = await call(procs[0]!, survivor.key, 'POST', '/keys', { name: `owner-${round}`, role: 'owner' });
      expect(made.status).toBe(201);
      const other = { key: made.body.data.secret as string, id: made.body.data.id as string };
      const [a, b] = await Promise.all([
        call(procs[1]!, other.key, 'DELETE', `/keys/${survivor.id}`),
        call(procs[2]!, survivor.key, 'DELETE', `/keys/${other.id}`),
      ]);
      // One revocation lands; the other is refused by the rule (or, if its own key was
      // already revoked when it authenticated, by that).
      const statuses = [a.status, b.status].sort();
      expect(statuses.filter((s) => s === 200), JSON.stringify([a.body, b.body])).toHaveLength(1);
      for (const refused of [a, b].filter((r) => r.status !== 200)) {
        if (refused.status === 400) expect(refused.body.code).toBe('SCHEMA_VALIDATION_FAILED');
        else expect(refused.status).toBe(401);
      }
      survivor = a.status === 200 ? other : survivor;
      const active = ((await call(procs[0]!, survivor.key, 'GET', '/keys')).body.data as { role: string; scopes: unknown; revokedAt: string | null }[]).filter(
        (k) => k.role === 'owner' && k.scopes === null && k.revokedAt === null,
      );
      expect(active).toHaveLength(1);
    }
  }, 60_000);
});

describe.skipIf(!onPostgres())('the rate-limit buckets of three processes on one database', () => {
  let procs: ServeProcess[] = [];
  let dataDir = '';

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'schemasync-multi-rate-'));
    const db = await createTestDatabase('multirate');
    procs = await startThree(dataDir, db.url, { rateLimit: true });
  }, 90_000);
  afterAll(() => {
    for (const p of procs) p.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('one client IP over the default bucket across the three gets 429: exactly 100 pass in a minute', async () => {
    await clearOfMinuteEnd();
    const owner = procs[0]!.ownerKey;
    const answers: Answer[] = [];
    // 150 requests, 50 per process, ten at a time.
    for (let round = 0; round < 15; round++) {
      answers.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => call(procs[(round * 10 + i) % 3]!, owner, 'GET', '/schema/objects')))));
    }
    const ok = answers.filter((a) => a.status === 200);
    const throttled = answers.filter((a) => a.status === 429);
    expect(ok).toHaveLength(100);
    expect(throttled).toHaveLength(50);
    for (const t of throttled) expect(t.body).toEqual({ success: false, statusCode: 429, message: THROTTLE_MESSAGE });
    // Every process refuses now, not only the one that counted the 101st.
    for (const p of procs) expect((await call(p, owner, 'GET', '/schema/objects')).status).toBe(429);
  }, 90_000);
});
