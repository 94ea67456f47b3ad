import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, openTempStore, startTestServer, type TestServer } from './helpers.js';
import { createServer } from '../../engine/server/app.js';
import type { Store } from '../../engine/store/types.js';

// Record routes (contract.md §3 "Records") over real HTTP and a real SQLite file.
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ keepData: true });
  await s.defineObject('company', [
    { name: 'name', type: 'text', required: true, unique: true, maxLength: 120 },
    { name: 'employees', type: 'integer', min: 0 },
  ]);
  await s.defineObject('deal', [
    { name: 'title', type: 'text', required: true },
    { name: 'stage', type: 'select', options: ['lead', 'qualified', 'won', 'lost'] },
    { name: 'amount', type: 'number', min: 0 },
    { name: 'counter', type: 'integer' },
    { name: 'company', type: 'relation', target: 'company' },
  ]);
});
afterAll(async () => s.close());

const create = (object: string, values: Record<string, unknown>, headers: Record<string, string> = {}) =>
  s.call('POST', `/records/${object}`, { body: values, headers });

describe('single records', () => {
  it('create → 201 record; get → etag; update with if-match; stale → 409', async () => {
    const c = await create('company', { name: 'Acme', employees: 10 });
    expect(c.status).toBe(201);
    const rec = c.body.data;
    expect(c.body.success).toBe(true);
    expect(rec).toMatchObject({ object: 'company', version: 1, values: { name: 'Acme', employees: 10 } });
    expect(rec.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof rec.createdAt).toBe('string');

    const g = await s.call('GET', `/records/company/${rec.id}`);
    expect(g.status).toBe(200);
    expect(g.headers.get('etag')).toBe('"1"');
    expect(g.body.data).toEqual(rec);

    const u = await s.call('PUT', `/records/company/${rec.id}`, { body: { employees: 11 }, headers: { 'if-match': '"1"' } });
    expect(u.status).toBe(200);
    expect(u.body.data).toMatchObject({ version: 2, values: { name: 'Acme', employees: 11 } });
    expect(u.headers.get('etag')).toBe('"2"');

    expectError(await s.call('PUT', `/records/company/${rec.id}`, { body: { employees: 12 }, headers: { 'if-match': '"1"' } }), {
      status: 409,
      code: 'SCHEMA_CONFLICT',
    });
    const bare = await s.call('PUT', `/records/company/${rec.id}`, { body: { employees: 12 }, headers: { 'if-match': '2' } });
    expect(bare.body.data.version).toBe(3);
    const star = await s.call('PUT', `/records/company/${rec.id}`, { body: { employees: 13 }, headers: { 'if-match': '*' } });
    expect(star.body.data.version).toBe(4);
  });

  it('if-match is exactly "<version>", a bare version or *: unbalanced quotes and weak tags are 400, nothing written', async () => {
    const rec = (await create('company', { name: 'Strict', employees: 1 })).body.data;
    for (const ifMatch of ['"1', '1"', 'W/"1"', 'W/1', '""', '"*"', '"1" "1"', '1.0']) {
      const r = await s.call('PUT', `/records/company/${rec.id}`, { body: { employees: 2 }, headers: { 'if-match': ifMatch } });
      expectError(r, { status: 400, code: undefined, message: 'Validation failed', errors: true });
      expect(r.body.errors.map((e: { path: unknown[] }) => e.path), ifMatch).toEqual([['headers', 'if-match']]);
    }
    expect((await s.call('GET', `/records/company/${rec.id}`)).body.data).toMatchObject({ version: 1, values: { employees: 1 } });
    const u = await s.call('PUT', `/records/company/${rec.id}`, { body: { employees: 2 }, headers: { 'if-match': ' "1" ' } });
    expect(u.body.data.version).toBe(2);
  });

  it('unknown attribute → 404 SCHEMA_ATTRIBUTE_NOT_FOUND; unknown object → 404 SCHEMA_OBJECT_NOT_FOUND', async () => {
    expectError(await create('company', { name: 'X', color: 'red' }), { status: 404, code: 'SCHEMA_ATTRIBUTE_NOT_FOUND' });
    expectError(await create('planet', { name: 'X' }), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
  });

  it('bad values → 400 SCHEMA_VALIDATION_FAILED naming every bad attribute', async () => {
    const r = await create('deal', { amount: -5, stage: 'maybe' });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    const named = r.body.errors.map((e: { path: unknown[] }) => e.path.at(-1));
    expect(named).toEqual(expect.arrayContaining(['amount', 'stage', 'title']));
  });

  it('unique and relation targets are checked', async () => {
    expectError(await create('company', { name: 'Acme' }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expectError(await create('deal', { title: 'x', company: crypto.randomUUID() }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
  });

  it('unknown record → 404 SCHEMA_RECORD_NOT_FOUND; delete answers { id }', async () => {
    expectError(await s.call('GET', `/records/company/${crypto.randomUUID()}`), { status: 404, code: 'SCHEMA_RECORD_NOT_FOUND' });
    const rec = (await create('company', { name: 'Doomed' })).body.data;
    const d = await s.call('DELETE', `/records/company/${rec.id}`);
    expect(d.body).toEqual({ success: true, data: { id: rec.id } });
    expectError(await s.call('GET', `/records/company/${rec.id}`), { status: 404, code: 'SCHEMA_RECORD_NOT_FOUND' });
    expectError(
      await s.call('PUT', `/records/company/${rec.id}`, { body: { name: 'x' }, headers: { 'if-match': '*' } }),
      { status: 404, code: 'SCHEMA_RECORD_NOT_FOUND' },
    );
  });
});

describe('bulk', () => {
  const count = async () => (await s.call('POST', '/records/deal/search', { body: { limit: 500 } })).body.data.length as number;

  it('a failing bulk-create changes nothing and names the item index', async () => {
    const before = await count();
    const r = await s.call('POST', '/records/deal/bulk-create', {
      body: { records: [{ title: 'a' }, { title: 'b' }, { title: 'c', amount: -1 }] },
    });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(r.body.errors[0].path).toEqual(['records', 2, 'amount']);
    expect(await count()).toBe(before);
  });

  it('bulk-create, bulk-update and bulk-delete, all or nothing', async () => {
    const c = await s.call('POST', '/records/deal/bulk-create', {
      body: { records: [{ title: 'b1', amount: 1 }, { title: 'b2', amount: 2 }, { title: 'b3', amount: 3 }] },
    });
    expect(c.status).toBe(201);
    const ids: string[] = c.body.data.records.map((r: { id: string }) => r.id);
    expect(ids).toHaveLength(3);

    const bad = await s.call('POST', '/records/deal/bulk-update', {
      body: { records: [{ id: ids[0], values: { amount: 10 } }, { id: ids[1], version: 7, values: { amount: 20 } }] },
    });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect((await s.call('GET', `/records/deal/${ids[0]}`)).body.data.values.amount).toBe(1);

    const u = await s.call('POST', '/records/deal/bulk-update', {
      body: { records: [{ id: ids[0], values: { amount: 10 } }, { id: ids[1], version: 1, values: { amount: 20 } }] },
    });
    expect(u.status).toBe(200);
    expect(u.body.data.records.map((r: { values: { amount: number } }) => r.values.amount)).toEqual([10, 20]);

    const d = await s.call('POST', '/records/deal/bulk-delete', { body: { ids } });
    expect(d.body).toEqual({ success: true, data: { deleted: 3 } });
  });
});

describe('search', () => {
  it('filters, sorts and pages with a cursor, visiting every record once', async () => {
    await s.call('POST', '/records/deal/bulk-create', {
      body: { records: Array.from({ length: 7 }, (_, i) => ({ title: `s${i}`, amount: 100 + i, stage: i % 2 ? 'won' : 'lead' })) },
    });
    const seen: number[] = [];
    let cursor: string | null | undefined;
    do {
      const r = await s.call('POST', '/records/deal/search', {
        body: { filter: { amount: { gte: 100 } }, sort: [{ attribute: 'amount', direction: 'desc' }], limit: 3, ...(cursor ? { cursor } : {}) },
      });
      expect(r.status).toBe(200);
      expect(r.body.page).toHaveProperty('nextCursor');
      seen.push(...r.body.data.map((x: { values: { amount: number } }) => x.values.amount));
      cursor = r.body.page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([106, 105, 104, 103, 102, 101, 100]);
    const won = await s.call('POST', '/records/deal/search', { body: { filter: { stage: 'won', amount: { gte: 100 } } } });
    expect(won.body.data).toHaveLength(3);
  });
});

describe('idempotency-key', () => {
  it('replays the first answer for the same body and refuses another body with 409', async () => {
    const key = crypto.randomUUID();
    const first = await create('company', { name: 'Idem', employees: 1 }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    const again = await s.call('POST', '/records/company', { raw: '{"employees":1,"name":"Idem"}', headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const found = await s.call('POST', '/records/company/search', { body: { filter: { name: 'Idem' } } });
    expect(found.body.data).toHaveLength(1);
    expectError(await create('company', { name: 'Other' }, { 'idempotency-key': key }), { status: 409, code: 'SCHEMA_CONFLICT' });
  });

  it('concurrent repeats of one key write once and all get the answer, with a unique attribute too', async () => {
    // company.name is unique: a repeat that ran the write itself would fail on the first
    // try's row (400) instead of replaying it.
    for (const [path, body] of [
      ['/records/company', { name: 'Racer', employees: 3 }],
      ['/records/company/bulk-create', { records: [{ name: 'Racer A' }, { name: 'Racer B' }] }],
    ] as const) {
      const key = crypto.randomUUID();
      const answers = await Promise.all(Array.from({ length: 16 }, () => s.call('POST', path, { body, headers: { 'idempotency-key': key } })));
      expect(answers.map((a) => a.status), answers.map((a) => a.text).join('\n')).toEqual(answers.map(() => 201));
      expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(15);
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    }
    const found = await s.call('POST', '/records/company/search', { body: { filter: { name: { startsWith: 'Racer' } } } });
    expect(found.body.page.total).toBe(3);
  });

  it('an object dropped and made again under its name replays nothing its predecessor answered', async () => {
    const key = crypto.randomUUID();
    const body = { records: [{ label: 'one' }, { label: 'two' }] };
    for (let round = 0; round < 2; round++) {
      await s.defineObject('scratch', [{ name: 'label', type: 'text' }]);
      const r = await s.call('POST', '/records/scratch/bulk-create', { body, headers: { 'idempotency-key': key } });
      expect(r.status, r.text).toBe(201);
      expect(r.headers.get('idempotent-replayed')).toBeNull();
      expect((await s.call('POST', '/records/scratch/search', { body: {} })).body.page.total).toBe(2);
      expect((await s.call('DELETE', '/schema/objects/scratch?force=true')).status).toBe(200);
    }
  });

  it('replays a bulk-create as the very text it first sent, whatever the key order of the repeat', async () => {
    const key = crypto.randomUUID();
    const records = Array.from({ length: 50 }, (_, i) => ({ name: `Bulk ${i}`, employees: i }));
    const first = await s.call('POST', '/records/company/bulk-create', { body: { records }, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(first.body.data.records).toHaveLength(50);
    // The same body with every object's keys in another order is the same body (contract.md §3).
    const reordered = JSON.stringify({ records: records.map((r) => ({ employees: r.employees, name: r.name })) });
    const again = await s.call('POST', '/records/company/bulk-create', { raw: reordered, headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(again.text).toBe(first.text);
    const found = await s.call('POST', '/records/company/search', { body: { filter: { name: { startsWith: 'Bulk ' } }, limit: 1 } });
    expect(found.body.page.total).toBe(50);
    const changed = { records: records.map((r, i) => (i === 49 ? { ...r, employees: 1000 } : r)) };
    expectError(await s.call('POST', '/records/company/bulk-create', { body: changed, headers: { 'idempotency-key': key } }), { status: 409, code: 'SCHEMA_CONFLICT' });
  });

  it('a write whose answer cannot be remembered is undone, so the retry writes once', async () => {
    let failOnce = true;
    // The fault reaches the store the write runs on: the store itself and a transaction's.
    const wrap = (store: Store): Store =>
      new Proxy(store, {
        get(target, prop, receiver) {
          if (prop === 'rememberIdempotent' && failOnce) {
            return async () => {
              failOnce = false;
              throw new Error('disk full');
            };
          }
          if (prop === 'transaction') return <T>(fn: (tx: Store) => Promise<T>) => target.transaction((tx) => fn(wrap(tx)));
          const v = Reflect.get(target, prop, receiver) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(receiver) : v;
        },
      });
    const flaky = await startTestServer({ wrap });
    try {
      await flaky.defineObject('memo', [{ name: 'text', type: 'text' }]);
      const key = crypto.randomUUID();
      const send = () => flaky.call('POST', '/records/memo', { body: { text: 'once' }, headers: { 'idempotency-key': key } });
      expectError(await send(), { status: 500, message: 'Internal server error' });
      const count = async () => (await flaky.call('POST', '/records/memo/search', { body: { limit: 1 } })).body.page.total;
      expect(await count()).toBe(0);
      expect((await send()).status).toBe(201);
      expect((await send()).headers.get('idempotent-replayed')).toBe('true');
      expect(await count()).toBe(1);
    } finally {
      await flaky.close();
    }
  });
});

describe('Prefer: return=minimal on the bulk writes', () => {
  const minimal = { prefer: 'return=minimal' };
  const count = async (prefix: string) =>
    (await s.call('POST', '/records/company/search', { body: { filter: { name: { startsWith: prefix } }, limit: 1 } })).body.page.total;

  it('bulk-create answers how many were written instead of the records, and writes them all', async () => {
    const records = Array.from({ length: 30 }, (_, i) => ({ name: `Min ${i}`, employees: i }));
    const r = await s.call('POST', '/records/company/bulk-create', { body: { records }, headers: minimal });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ success: true, data: { created: 30 } });
    expect(r.headers.get('preference-applied')).toBe('return=minimal');
    expect(await count('Min ')).toBe(30);
  });

  it('bulk-update answers how many were updated; the records carry the new values and versions', async () => {
    const made = await s.call('POST', '/records/company/bulk-create', { body: { records: [{ name: 'MinUp a' }, { name: 'MinUp b' }] } });
    const ids: string[] = made.body.data.records.map((r: { id: string }) => r.id);
    const r = await s.call('POST', '/records/company/bulk-update', {
      body: { records: ids.map((id) => ({ id, version: 1, values: { employees: 7 } })) },
      headers: { prefer: 'respond-async, return="minimal"; foo=bar' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { updated: 2 } });
    expect(r.headers.get('preference-applied')).toBe('return=minimal');
    for (const id of ids) expect((await s.call('GET', `/records/company/${id}`)).body.data).toMatchObject({ version: 2, values: { employees: 7 } });
  });

  it.each(['return=representation', 'handling=lenient', 'return', 'return=minimal, return=representation', ';;='])(
    'with %j the answer is the records, as without the header',
    async (prefer) => {
      const r = await s.call('POST', '/records/company/bulk-create', { body: { records: [{ name: `Rep ${prefer}` }] }, headers: { prefer } });
      expect(r.status).toBe(201);
      expect(r.body.data.records).toHaveLength(1);
      expect(r.headers.get('preference-applied')).toBeNull();
    },
  );

  it('a refused batch is refused as without the preference, and writes nothing', async () => {
    const r = await s.call('POST', '/records/company/bulk-create', { body: { records: [{ name: 'MinBad ok' }, { name: 'MinBad x', employees: 'many' }] }, headers: minimal });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED' });
    expect(r.body.errors[0].path).toEqual(['records', 1, 'employees']);
    expect(await count('MinBad ')).toBe(0);
  });

  it('under an idempotency key the minimal answer is remembered and replayed, whatever the repeat prefers', async () => {
    const key = crypto.randomUUID();
    const body = { records: [{ name: 'MinIdem 1' }, { name: 'MinIdem 2' }] };
    const first = await s.call('POST', '/records/company/bulk-create', { body, headers: { ...minimal, 'idempotency-key': key } });
    expect(first.body.data).toEqual({ created: 2 });
    for (const headers of [{ ...minimal, 'idempotency-key': key }, { 'idempotency-key': key }]) {
      const again = await s.call('POST', '/records/company/bulk-create', { body, headers });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      // The first answer's body (contract.md §3); the header belongs to answers written now.
      expect(again.text).toBe(first.text);
      expect(again.headers.get('preference-applied')).toBeNull();
    }
    expect(await count('MinIdem ')).toBe(2);
  });
});

describe('patterns', () => {
  it('a pattern that backtracks without end refuses the value and leaves the server answering', async () => {
    await s.defineObject('coded', [{ name: 'code', type: 'text', pattern: '^(a+)+$' }]);
    const [bad, health] = await Promise.all([
      s.call('POST', '/records/coded', { body: { code: `${'a'.repeat(40)}!` } }),
      s.call('GET', '/health'),
    ]);
    expectError(bad, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(health.status).toBe(200);
    expect((await s.call('POST', '/records/coded', { body: { code: 'aaaa' } })).status).toBe(201);
  });
});

describe('concurrency and restarts', () => {
  it('concurrent updaters with if-match lose no update', async () => {
    const rec = (await create('deal', { title: 'counter', counter: 0 })).body.data;
    const workers = 8;
    const perWorker = 5;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let done = 0; done < perWorker; ) {
          const g = await s.call('GET', `/records/deal/${rec.id}`);
          const u = await s.call('PUT', `/records/deal/${rec.id}`, {
            body: { counter: g.body.data.values.counter + 1 },
            headers: { 'if-match': g.headers.get('etag')! },
          });
          if (u.status === 200) done++;
          else expect(u.body.code).toBe('SCHEMA_CONFLICT');
        }
      }),
    );
    const end = await s.call('GET', `/records/deal/${rec.id}`);
    expect(end.body.data.values.counter).toBe(workers * perWorker);
    expect(end.body.data.version).toBe(workers * perWorker + 1);
  });

  it('a restarted server keeps its data', async () => {
    const rec = (await create('company', { name: 'Persistent' })).body.data;
    await s.app.close();
    s.store.close();
    const store = await openTempStore(s.dataDir);
    const app = await createServer({ store, rateLimit: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const port = (app.server.address() as { port: number }).port;
      const r = await fetch(`http://127.0.0.1:${port}/v1/records/company/${rec.id}`, { headers: { authorization: `Bearer ${s.ownerKey}` } });
      expect(r.status).toBe(200);
      expect(((await r.json()) as { data: unknown }).data).toEqual(rec);
    } finally {
      await app.close();
      store.close();
    }
  });
});
