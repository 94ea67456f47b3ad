import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteOnly } from '../support/backend.js';
import { ServiceError } from '../../engine/errors.js';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// Record and schema routes over real HTTP and a real SQLite file: the rules an audit
// found missing (protected objects' attributes, every bad attribute reported, bulk caps
// and item indexes, the last-owner rule, filter list caps, `errors` only on 400).
const rawLines: string[] = [];
const stream = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const l of chunk.toString().split('\n')) if (l.trim()) rawLines.push(l);
    done();
  },
});

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ logger: { level: 'info', stream } });
  const company = await s.call('POST', '/schema/objects', {
    body: { name: 'company', attributes: [{ name: 'name', type: 'text', required: true, unique: true }] },
  });
  expect(company.status).toBe(201);
  await s.defineObject('deal', [
    { name: 'title', type: 'text', required: true },
    { name: 'code', type: 'text', unique: true },
    { name: 'n1', type: 'integer' },
    { name: 'n2', type: 'integer' },
    { name: 'stage', type: 'select', options: ['lead', 'won'] },
    { name: 'tags', type: 'multiselect', options: ['a', 'b', 'c'] },
    { name: 'company', type: 'relation', target: 'company' },
  ]);
});
afterAll(async () => s.close());

const create = (object: string, values: Record<string, unknown>) => s.call('POST', `/records/${object}`, { body: values });
const paths = (r: { body: { errors: { path: unknown[] }[] } }) => r.body.errors.map((e) => JSON.stringify(e.path)).sort();
const count = async (object: string) => (await s.call('POST', `/records/${object}/search`, { body: { limit: 1 } })).body.page.total as number;

describe('protected objects (SCHEMA_PROTECTED_OBJECT)', () => {
  it.skipIf(sqliteOnly('sets the protected flag in the SQLite file, which no route can'))("a protected object's attributes can be neither changed nor deleted (403), and nothing changes", async () => {
    await s.defineObject('vault', [{ name: 'secret', type: 'text', maxLength: 10 }]);
    // Nothing public marks an object protected yet (core and bundle objects will): set the
    // flag from another connection, which the server notices (data_version).
    const db = new Database(join(s.dataDir, 'schemasync.db'));
    db.prepare("UPDATE _ss_objects SET protected = 1 WHERE name = 'vault'").run();
    db.close();
    expect((await s.call('GET', '/schema/objects/vault')).body.data.protected).toBe(true);

    expectError(await s.call('PUT', '/schema/objects/vault/attributes/secret', { body: { maxLength: 99, label: 'x' } }), {
      status: 403,
      code: 'SCHEMA_PROTECTED_OBJECT',
      errors: false,
    });
    expectError(await s.call('DELETE', '/schema/objects/vault/attributes/secret'), { status: 403, code: 'SCHEMA_PROTECTED_OBJECT', errors: false });
    const after = (await s.call('GET', '/schema/objects/vault')).body.data.attributes.find((a: { name: string }) => a.name === 'secret');
    expect(after).toMatchObject({ name: 'secret', maxLength: 10 });
    expect(after.label ?? null).toBeNull();
  });
});

describe('every bad attribute is reported', () => {
  it('create: type errors and a missing relation target and a taken unique value answer together', async () => {
    const taken = await create('deal', { title: 't', code: 'TAKEN' });
    expect(taken.status).toBe(201);
    const before = await count('deal');
    const r = await create('deal', { n1: 'x', n2: 'y', stage: 'maybe', code: 'TAKEN', company: crypto.randomUUID() });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(paths(r)).toEqual(['["code"]', '["company"]', '["n1"]', '["n2"]', '["stage"]', '["title"]'].sort());
    expect(await count('deal')).toBe(before);
  });

  it('update: a type error and a missing relation target answer together, and the record is unchanged', async () => {
    const rec = (await create('deal', { title: 'u' })).body.data;
    const r = await s.call('PUT', `/records/deal/${rec.id}`, { body: { n1: 'x', company: crypto.randomUUID() }, headers: { 'if-match': '*' } });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(paths(r)).toEqual(['["company"]', '["n1"]']);
    expect((await s.call('GET', `/records/deal/${rec.id}`)).body.data.version).toBe(1);
  });

  it('bulk-create and bulk-update: both kinds of error, each under its item index', async () => {
    const before = await count('deal');
    const ghost = crypto.randomUUID();
    const c = await s.call('POST', '/records/deal/bulk-create', {
      body: { records: [{ title: 'a', n1: 'x' }, { title: 'b', company: ghost }, { title: 'c', code: 'TAKEN', n2: 'y' }] },
    });
    expectError(c, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(c.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([
      ['records', 0, 'n1'],
      ['records', 1, 'company'],
      ['records', 2, 'n2'],
      ['records', 2, 'code'],
    ]);
    expect(await count('deal')).toBe(before);

    const made = (await s.call('POST', '/records/deal/bulk-create', { body: { records: [{ title: 'p' }, { title: 'q' }] } })).body.data.records;
    const u = await s.call('POST', '/records/deal/bulk-update', {
      body: { records: [{ id: made[0].id, values: { company: ghost } }, { id: made[1].id, values: { n1: 'x' } }] },
    });
    expectError(u, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(u.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([
      ['records', 0, 'values', 'company'],
      ['records', 1, 'values', 'n1'],
    ]);
  });
  it('create with clean types: a taken unique value and a missing relation target are named together, as PUT names them', async () => {
    expect((await create('deal', { title: 'holder', code: 'EB-A' })).status).toBe(201);
    const before = await count('deal');
    const ghost = crypto.randomUUID();
    const one = await create('deal', { title: 'x', code: 'EB-A', company: ghost });
    expectError(one, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: '2 values are invalid', errors: true });
    expect(paths(one)).toEqual(['["code"]', '["company"]']);
    const other = (await create('deal', { title: 'y' })).body.data;
    const put = await s.call('PUT', `/records/deal/${other.id}`, { body: { code: 'EB-A', company: ghost }, headers: { 'if-match': '*' } });
    expect(paths(put)).toEqual(paths(one));

    const bulk = await s.call('POST', '/records/deal/bulk-create', { body: { records: [{ title: 'a', code: 'EB-A' }, { title: 'b', company: ghost }] } });
    expectError(bulk, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(bulk.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([
      ['records', 0, 'code'],
      ['records', 1, 'company'],
    ]);
    expect(await count('deal')).toBe(before + 1);
  });
});

describe('bulk caps and item indexes', () => {
  it('an unknown attribute in a bulk item → 404 whose message names the item; errors[].path kept', async () => {
    const made = (await s.call('POST', '/records/deal/bulk-create', { body: { records: [{ title: 'k0' }, { title: 'k1' }] } })).body.data.records;
    const c = await s.call('POST', '/records/deal/bulk-create', { body: { records: [{ title: 'x' }, { title: 'y', nme: 'z' }] } });
    expectError(c, { status: 404, code: 'SCHEMA_ATTRIBUTE_NOT_FOUND', message: 'records[1]: Object "deal" has no attribute "nme"', errors: false });
    const u = await s.call('POST', '/records/deal/bulk-update', {
      body: { records: [{ id: made[0].id, values: { title: 'x' } }, { id: made[1].id, values: { nme: 'z' } }] },
    });
    expectError(u, { status: 404, code: 'SCHEMA_ATTRIBUTE_NOT_FOUND', message: 'records[1]: Object "deal" has no attribute "nme"', errors: false });
    expect((await s.call('GET', `/records/deal/${made[0].id}`)).body.data.values.title).toBe('k0');
    // A single record has no item to name.
    expectError(await create('deal', { title: 'x', nme: 'z' }), { status: 404, code: 'SCHEMA_ATTRIBUTE_NOT_FOUND', message: 'Object "deal" has no attribute "nme"' });
    // The field path stays on the error (for the store's callers and the log), item index included.
    const actor = { keyId: 'k', role: 'owner', scopes: null };
    const thrownPaths = async (fn: () => unknown): Promise<unknown> => {
      try {
        await fn();
      } catch (err) {
        return (err as ServiceError).details.errors?.map((e) => e.path);
      }
      return 'no error';
    };
    expect(await thrownPaths(() => s.store.bulkCreate('deal', [{ title: 'x' }, { nme: 'z' }], actor))).toEqual([['records', 1, 'nme']]);
    expect(await thrownPaths(() => s.store.bulkUpdate('deal', [{ id: made[1].id, values: { nme: 'z' } }], actor))).toEqual([['records', 0, 'values', 'nme']]);
  });


  it('bulk-create takes more than 1,000 records in one call; bulk-delete stays at 1..1000 ids', async () => {
    const before = await count('company');
    const records = Array.from({ length: 1500 }, (_, i) => ({ name: `bulk-${i}` }));
    const c = await s.call('POST', '/records/company/bulk-create', { body: { records } });
    expect(c.status).toBe(201);
    expect(c.body.data.records).toHaveLength(1500);
    expect(await count('company')).toBe(before + 1500);
    const over = await s.call('POST', '/records/company/bulk-create', { body: { records: Array.from({ length: 10_001 }, () => ({ name: 'x' })) } });
    expectError(over, { status: 400, errors: true });
    expect(await count('company')).toBe(before + 1500);

    const ids = c.body.data.records.map((r: { id: string }) => r.id);
    const tooMany = await s.call('POST', '/records/company/bulk-delete', { body: { ids: ids.slice(0, 1001) } });
    expectError(tooMany, { status: 400, errors: true });
    expect(await count('company')).toBe(before + 1500);
  });

  it('a stale version in bulk-update → 409 naming records[1]; a missing id → 404 naming the item; nothing changes', async () => {
    const made = (await s.call('POST', '/records/deal/bulk-create', { body: { records: [{ title: 'v0' }, { title: 'v1' }] } })).body.data.records;
    const stale = await s.call('POST', '/records/deal/bulk-update', {
      body: { records: [{ id: made[0].id, values: { n1: 1 } }, { id: made[1].id, version: 9, values: { n1: 2 } }] },
    });
    expectError(stale, { status: 409, code: 'SCHEMA_CONFLICT', message: /^records\[1\]: /, errors: false });
    const missing = await s.call('POST', '/records/deal/bulk-update', {
      body: { records: [{ id: made[0].id, values: { n1: 1 } }, { id: crypto.randomUUID(), values: { n1: 2 } }] },
    });
    expectError(missing, { status: 404, code: 'SCHEMA_RECORD_NOT_FOUND', message: /^records\[1\]: /, errors: false });
    expect((await s.call('GET', `/records/deal/${made[0].id}`)).body.data.version).toBe(1);

    const del = await s.call('POST', '/records/deal/bulk-delete', { body: { ids: [made[0].id, crypto.randomUUID()] } });
    expectError(del, { status: 404, code: 'SCHEMA_RECORD_NOT_FOUND', message: /^ids\[1\]: /, errors: false });
    expect((await s.call('GET', `/records/deal/${made[0].id}`)).status).toBe(200);
  });
});

describe('search filter caps', () => {
  it('an in / nin list over 1,000 values is a 400 naming the filter path, not a 500', async () => {
    const huge = Array.from({ length: 40_000 }, (_, i) => `C-${i}`);
    const r = await s.call('POST', '/records/deal/search', { body: { filter: { code: { in: huge } } } });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(r.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([['filter', 'code', 'in']]);
    const nested = await s.call('POST', '/records/deal/search', { body: { filter: { or: [{ stage: 'won' }, { code: { nin: huge.slice(0, 1001) } }] } } });
    expectError(nested, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(nested.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([['filter', 'or', 1, 'code', 'nin']]);
  });

  it('lists up to the cap work, on a single and a multi-valued attribute', async () => {
    await create('deal', { title: 'tagged', code: 'C-999', tags: ['b'] });
    const list = Array.from({ length: 1000 }, (_, i) => `C-${i}`);
    const single = await s.call('POST', '/records/deal/search', { body: { filter: { code: { in: list } } } });
    expect(single.status).toBe(200);
    expect(single.body.data.map((d: { values: { code: string } }) => d.values.code)).toEqual(['C-999']);
    // Operands of a multiselect are its options (a C-… value would be refused as a typo).
    const options = Array.from({ length: 999 }, (_, i) => (i % 2 ? 'a' : 'c'));
    const multi = await s.call('POST', '/records/deal/search', { body: { filter: { tags: { in: [...options, 'b'] } } } });
    expect(multi.status).toBe(200);
    expect(multi.body.data.map((d: { values: { title: string } }) => d.values.title)).toEqual(['tagged']);
  });

  it('a filter with thousands of conditions is a 400, not a 500 (SQLite expression depth)', async () => {
    const r = await s.call('POST', '/records/deal/search', { body: { filter: { and: Array.from({ length: 3000 }, () => ({ n1: 1 })) } } });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(r.body.errors[0].path).toEqual(['filter']);
  });
});

describe('envelope: errors only on a 400 (service-interface.md Envelope table)', () => {
  it('404 unknown attribute carries no errors; 400 validation and name codes keep them', async () => {
    const r = await create('deal', { title: 'x', colour: 'red' });
    expectError(r, { status: 404, code: 'SCHEMA_ATTRIBUTE_NOT_FOUND', errors: false });
    expect(r.body.message).toMatch(/colour/);
    expectError(await create('deal', { n1: 'x' }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expectError(await s.call('POST', '/schema/objects', { body: { name: 'Bad-Name' } }), { status: 400, code: 'SCHEMA_INVALID_OBJECT_NAME', errors: true });
  });

  it('attribute names and / or / not are refused: they could never be filtered on', async () => {
    const r = await s.call('POST', '/schema/objects/deal/attributes', { body: { name: 'or', type: 'text' } });
    expectError(r, { status: 400, code: 'SCHEMA_INVALID_ATTRIBUTE_NAME' });
    expect(r.body.message).toMatch(/reserved/);
    expectError(await s.call('POST', '/schema/objects', { body: { name: 'gate', attributes: [{ name: 'not', type: 'boolean' }] } }), {
      status: 400,
      code: 'SCHEMA_INVALID_ATTRIBUTE_NAME',
    });
    expect((await s.call('GET', '/schema/objects/gate')).status).toBe(404);
  });

  it('a __proto__ key written with a \\u escape is refused like a plain one', async () => {
    const r = await s.call('POST', '/records/deal', { raw: '{"title":"x","\\u005f_proto__":{"polluted":true}}' });
    expectError(r, { status: 400, code: undefined, message: 'Validation failed', errors: true });
    expect(r.body.errors[0]).toEqual({ path: ['__proto__'], message: 'the key "__proto__" is not allowed' });
    const ctor = await s.call('POST', '/records/deal', { raw: '{"title":"x","meta":{"\\u0063onstructor":{"prototype":{"x":1}}}}' });
    expectError(ctor, { status: 400, code: undefined, message: 'Validation failed', errors: true });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('a masked 5xx drops errors and logs one line with reqId once', async () => {
    const lines: string[] = [];
    const own = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(l);
        done();
      },
    });
    const broken = await startTestServer({
      logger: { level: 'info', stream: own },
      wrap: (store) =>
        new Proxy(store, {
          get(target, prop, receiver) {
            if (prop === 'getRecord') {
              return () => {
                throw new ServiceError('SCHEMA_DESTRUCTIVE_NOT_ALLOWED', 'secret detail', { errors: [{ path: ['x'], message: 'secret field' }] });
              };
            }
            const v = Reflect.get(target, prop, receiver) as unknown;
            return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
          },
        }),
    });
    try {
      await broken.call('POST', '/schema/objects', { body: { name: 'thing' } });
      const r = await broken.call('GET', `/records/thing/${crypto.randomUUID()}`);
      expectError(r, { status: 500, code: 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED', message: 'Internal server error', errors: false });
      expect(r.text).not.toContain('secret');
      const id = r.headers.get('x-request-id')!;
      const cause = lines.filter((l) => l.includes(id) && l.includes('secret detail'));
      expect(cause).toHaveLength(1);
      expect(cause[0]!.match(/"reqId"/g)).toHaveLength(1);
    } finally {
      await broken.close();
    }
  });
});

describe('last-owner rule', () => {
  it('a scoped owner key, keys:manage or not, does not count as the remaining owner', async () => {
    const restricted = await s.keyFor('owner', ['records:read', 'records:write']);
    const restrictedId = restricted.split('_')[1]!;
    // keys:manage alone mints only keys within its own scopes: it could never read data again.
    const manager = await s.keyFor('owner', ['keys:manage']);
    const mainId = s.ownerKey.split('_')[1]!;
    expectError(await s.call('DELETE', `/keys/${mainId}`), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: false });
    expect((await s.call('GET', '/keys')).status).toBe(200);
    // A second owner without a scope limit makes it possible; scoped owners may go any time.
    const full = await s.keyFor('owner', null);
    expect((await s.call('DELETE', `/keys/${restrictedId}`)).status).toBe(200);
    expect((await s.call('DELETE', `/keys/${manager.split('_')[1]!}`)).status).toBe(200);
    expect((await s.call('DELETE', `/keys/${mainId}`)).status).toBe(200);
    expect((await s.call('GET', '/schema/objects', { key: full })).status).toBe(200);
    expectError(await s.call('DELETE', `/keys/${full.split('_')[1]!}`, { key: full }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED' });
  });
});
