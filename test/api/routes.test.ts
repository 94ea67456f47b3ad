import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// What the record routes add on top of the store — status codes, etag / if-match parsing,
// idempotency keys — checked over HTTP against the real store, one object `note`.
let s: TestServer;
/** Records of `note` stored so far: a replay must not add one. */
const writes = async (): Promise<number> => (await s.store.search('note', { limit: 1 })).total ?? -1;
beforeAll(async () => {
  s = await startTestServer();
  await s.defineObject('note', [
    { name: 'text', type: 'text' },
    { name: 'n', type: 'integer' },
    { name: 'a', type: 'integer' },
  ]);
});
afterAll(async () => s.close());

describe('record routes', () => {
  it('create 201, get with etag, if-match in each accepted form', async () => {
    const c = await s.call('POST', '/records/note', { body: { text: 'hi' } });
    expect(c.status).toBe(201);
    const id = c.body.data.id;
    const g = await s.call('GET', `/records/note/${id}`);
    expect(g.headers.get('etag')).toBe('"1"');
    for (const [ifMatch, version] of [['"1"', 2], ['2', 3], [' "3" ', 4], ['*', 5]] as const) {
      const u = await s.call('PUT', `/records/note/${id}`, { body: { text: `v${version}` }, headers: { 'if-match': ifMatch } });
      expect(u.status, ifMatch).toBe(200);
      expect(u.body.data.version).toBe(version);
      expect(u.headers.get('etag')).toBe(`"${version}"`);
    }
    expectError(await s.call('PUT', `/records/note/${id}`, { body: { text: 'late' }, headers: { 'if-match': '"4"' } }), {
      status: 409,
      code: 'SCHEMA_CONFLICT',
    });
    expect((await s.call('DELETE', `/records/note/${id}`)).body).toEqual({ success: true, data: { id } });
  });

  it('idempotency-key replays without writing, per key holder, and refuses another body', async () => {
    const key = 'retry-1';
    const before = await writes();
    const a = await s.call('POST', '/records/note', { body: { text: 'once', n: 1 }, headers: { 'idempotency-key': key } });
    const b = await s.call('POST', '/records/note', { raw: '{"n":1,"text":"once"}', headers: { 'idempotency-key': key } });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(await writes()).toBe(before + 1);
    expectError(await s.call('POST', '/records/note', { body: { text: 'twice' }, headers: { 'idempotency-key': key } }), {
      status: 409,
      code: 'SCHEMA_CONFLICT',
    });
    // Another caller's key space is separate: the same key is new for them.
    const other = await s.keyFor('member');
    const c = await s.call('POST', '/records/note', { key: other, body: { text: 'once', n: 1 }, headers: { 'idempotency-key': key } });
    expect(c.status).toBe(201);
    expect(c.body.data.id).not.toBe(a.body.data.id);
    // And so is another route: bulk-create under the same key is a new request.
    const bulk = await s.call('POST', '/records/note/bulk-create', { body: { records: [{ text: 'x' }] }, headers: { 'idempotency-key': key } });
    expect(bulk.status).toBe(201);
    const again = await s.call('POST', '/records/note/bulk-create', { body: { records: [{ text: 'x' }] }, headers: { 'idempotency-key': key } });
    expect(again.body).toEqual(bulk.body);
  });

  it('a failed request is not remembered, so its retry runs', async () => {
    const key = 'retry-2';
    expectError(await s.call('POST', '/records/nothing', { body: { text: 'x' }, headers: { 'idempotency-key': key } }), {
      status: 404,
      code: 'SCHEMA_OBJECT_NOT_FOUND',
    });
    expect((await s.call('POST', '/records/nothing', { body: { text: 'x' }, headers: { 'idempotency-key': key } })).status).toBe(404);
  });

  it('search answers a list with page, and accepts no body', async () => {
    const r = await s.call('POST', '/records/note/search', { body: { limit: 2 } });
    expect(r.status).toBe(200);
    expect(r.body.data.length).toBeLessThanOrEqual(2);
    // a further page exists exactly when more records are stored than fit in this one
    const total = r.body.page.total as number;
    expect(r.body.page).toEqual({ nextCursor: total > 2 ? expect.any(String) : null, total: expect.any(Number) });
    const none = await s.call('POST', '/records/note/search');
    expect(none.status).toBe(200);
  });

  it('bulk-delete answers { deleted } (an unknown id refuses the whole call: records-audit.test.ts)', async () => {
    const ids = (await s.call('POST', '/records/note/bulk-create', { body: { records: [{ a: 1 }, { a: 2 }] } })).body.data.records.map(
      (r: { id: string }) => r.id,
    );
    const d = await s.call('POST', '/records/note/bulk-delete', { body: { ids } });
    expect(d.body).toEqual({ success: true, data: { deleted: 2 } });
  });
});

describe('source push validation (before the store is asked)', () => {
  it('an invalid declaration is 400 with the spec name code and every problem, paths into the body', async () => {
    const r = await s.call('PUT', '/schema/sources/crm', {
      body: { declaration: { objects: { 'Bad-Name': { attributes: {} }, deal: { attributes: { amount: { type: 'strng' } } } } } },
    });
    expectError(r, { status: 400, code: 'SCHEMA_INVALID_OBJECT_NAME', errors: true });
    expect(r.body.errors.length).toBeGreaterThanOrEqual(2);
    expect(r.body.errors.every((e: { path: unknown[] }) => e.path[0] === 'declaration')).toBe(true);
    expect(JSON.stringify(r.body.errors)).toMatch(/text/);
  });

  it('a declaration that is not an object of objects/views is 400 Validation failed', async () => {
    const r = await s.call('PUT', '/schema/sources/crm', { body: { declaration: { objects: [], extra: 1 } } });
    expectError(r, { status: 400, code: undefined, message: 'Validation failed', errors: true });
  });
});
