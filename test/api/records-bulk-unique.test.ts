import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// bulk-update is all or nothing (contract.md §3), so unique values are judged on the
// batch's end state, not row by row: swaps, rotations and hand-overs inside one batch
// succeed; a value still held at the end by someone else is a 400 naming the item.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await s.defineObject('slot', [
    { name: 'title', type: 'text' },
    { name: 'code', type: 'text', unique: true },
    { name: 'position', type: 'integer', unique: true },
  ]);
});
afterAll(async () => s.close());

type Rec = { id: string; version: number; values: { title: string | null; code: string | null; position: number | null } };

let n = 0;
/** Fresh records with codes unique to this call (the tests share one object). */
async function make(count: number): Promise<{ recs: Rec[]; code: (i: number) => string; pos: (i: number) => number }> {
  const run = ++n;
  const code = (i: number) => `R${run}-${i}`;
  const pos = (i: number) => run * 100 + i;
  const c = await s.call('POST', '/records/slot/bulk-create', {
    body: { records: Array.from({ length: count }, (_, i) => ({ title: `t${i}`, code: code(i), position: pos(i) })) },
  });
  expect(c.status).toBe(201);
  return { recs: c.body.data.records, code, pos };
}

const read = async (id: string): Promise<Rec> => (await s.call('GET', `/records/slot/${id}`)).body.data;
const bulkUpdate = (records: unknown[]) => s.call('POST', '/records/slot/bulk-update', { body: { records } });

/** Nothing of a refused batch is left: every record reads back as it was. */
async function expectUnchanged(recs: Rec[]): Promise<void> {
  for (const r of recs) {
    const now = await read(r.id);
    expect(now.version).toBe(r.version);
    expect(now.values).toEqual(r.values);
  }
}

describe('bulk-update: unique values judged on the end state', () => {
  it('two records swap their unique values: 200, read back swapped, versions bumped', async () => {
    const { recs: [a, b], code } = await make(2);
    const u = await bulkUpdate([
      { id: a!.id, version: 1, values: { code: code(1) } },
      { id: b!.id, version: 1, values: { code: code(0) } },
    ]);
    expect(u.status).toBe(200);
    expect(u.body.data.records.map((r: Rec) => [r.values.code, r.version])).toEqual([
      [code(1), 2],
      [code(0), 2],
    ]);
    expect((await read(a!.id)).values.code).toBe(code(1));
    expect((await read(b!.id)).values.code).toBe(code(0));
    expect((await read(a!.id)).version).toBe(2);
    expect((await read(b!.id)).version).toBe(2);
  });

  it('three records rotate two unique attributes at once', async () => {
    const { recs, code, pos } = await make(3);
    const u = await bulkUpdate(recs.map((r, i) => ({ id: r.id, values: { code: code((i + 1) % 3), position: pos((i + 2) % 3) } })));
    expect(u.status).toBe(200);
    for (const [i, r] of recs.entries()) {
      const now = await read(r.id);
      expect(now.values).toMatchObject({ title: `t${i}`, code: code((i + 1) % 3), position: pos((i + 2) % 3) });
      expect(now.version).toBe(2);
    }
  });

  it('a value moves from B to A while B takes a new one; a value freed by null is taken', async () => {
    const { recs, code, pos } = await make(3);
    const [a, b, c] = recs;
    const u = await bulkUpdate([
      { id: a!.id, values: { code: code(1), position: pos(2) } },
      { id: b!.id, values: { code: 'fresh-' + code(1) } },
      { id: c!.id, values: { position: null } },
    ]);
    expect(u.status).toBe(200);
    expect((await read(a!.id)).values).toMatchObject({ code: code(1), position: pos(2) });
    expect((await read(b!.id)).values).toMatchObject({ code: 'fresh-' + code(1), position: pos(1) });
    expect((await read(c!.id)).values).toMatchObject({ code: code(2), position: null });
  });

  it("a row taking the value of a batch row that keeps it → 400 naming the item; nothing changes", async () => {
    const { recs, code } = await make(2);
    const [a, b] = recs;
    const u = await bulkUpdate([
      { id: a!.id, values: { code: code(1) } },
      // b is in the batch but does not write code: it still holds code(1) at the end.
      { id: b!.id, values: { title: 'renamed' } },
    ]);
    expectError(u, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(u.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([['records', 0, 'values', 'code']]);
    expect(u.body.errors[0].message).toContain(b!.id);
    await expectUnchanged(recs);

    // The same when b writes code but keeps the very value it holds.
    const w = await bulkUpdate([
      { id: a!.id, values: { code: code(1) } },
      { id: b!.id, values: { code: code(1) } },
    ]);
    expectError(w, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(w.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([['records', 1, 'values', 'code']]);
    await expectUnchanged(recs);
  });

  it('two batch rows ending with the same value → 400 naming the second; nothing changes', async () => {
    const { recs, code } = await make(3);
    const [a, b, c] = recs;
    const u = await bulkUpdate([
      { id: a!.id, values: { code: code(2) } },
      { id: b!.id, values: { code: code(2) } },
      { id: c!.id, values: { code: 'away-' + code(2) } },
    ]);
    expectError(u, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(u.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([['records', 1, 'values', 'code']]);
    expect(u.body.errors[0].message).toMatch(/item 0 of this batch/);
    await expectUnchanged(recs);
  });

  it('a value held by a record outside the batch → 400 naming the item; the rest of the batch is not applied', async () => {
    const { recs, code } = await make(3);
    const [a, b, outside] = recs;
    const u = await bulkUpdate([
      { id: a!.id, values: { code: code(1) } },
      { id: b!.id, values: { code: code(2) } },
    ]);
    expectError(u, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(u.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([['records', 1, 'values', 'code']]);
    expect(u.body.errors[0].message).toContain(outside!.id);
    await expectUnchanged(recs);
  });
});

describe('creates with an idempotency key (every SDK and CLI create sends one): a unique value already taken', () => {
  it('a single create → 400 naming the attribute and the holder, as without a key; nothing stored, the key not spent', async () => {
    const { recs, code } = await make(1);
    const body = { title: 'clash', code: code(0) };
    const plain = await s.call('POST', '/records/slot', { body });
    const key = `unique-${Date.now()}`;
    const keyed = await s.call('POST', '/records/slot', { body, headers: { 'idempotency-key': key } });
    expectError(keyed, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(keyed.body).toEqual(plain.body);
    expect(keyed.body.errors[0].path).toEqual(['code']);
    expect(keyed.body.errors[0].message).toContain(recs[0]!.id);
    const held = await s.call('POST', '/records/slot/search', { body: { filter: { code: code(0) } } });
    expect(held.body.data).toHaveLength(1);
    // Refused, so not remembered: the same key with the same body is refused again, not replayed.
    const again = await s.call('POST', '/records/slot', { body, headers: { 'idempotency-key': key } });
    expect(again.status).toBe(400);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a bulk-create → 400 naming the item, nothing of the batch stored', async () => {
    const { code } = await make(1);
    const records = [{ title: 'fresh', code: `${code(0)}-new` }, { title: 'clash', code: code(0) }];
    const keyed = await s.call('POST', '/records/slot/bulk-create', { body: { records }, headers: { 'idempotency-key': `bulk-unique-${Date.now()}` } });
    expectError(keyed, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(keyed.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([['records', 1, 'code']]);
    const fresh = await s.call('POST', '/records/slot/search', { body: { filter: { code: `${code(0)}-new` } } });
    expect(fresh.body.data).toHaveLength(0);
  });
});
