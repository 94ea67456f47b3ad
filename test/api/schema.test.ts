import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteOnly } from '../support/backend.js';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// Schema routes (contract.md §3 "Schema"), every code issue 3 lists for them.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s.close());

const post = (path: string, body: unknown) => s.call('POST', path, { body });

describe('objects', () => {
  it('creates a runtime object and reads it by name or id', async () => {
    const r = await post('/schema/objects', { name: 'company', label: 'Company', attributes: [{ name: 'name', type: 'text', required: true }] });
    expect(r.status).toBe(201);
    const obj = r.body.data;
    expect(obj).toMatchObject({ name: 'company', label: 'Company', owner: { kind: 'runtime' }, protected: false });
    const names = obj.attributes.map((a: { name: string }) => a.name);
    expect(names).toEqual(expect.arrayContaining(['id', 'version', 'created_at', 'updated_at', 'created_by', 'name']));
    expect(obj.attributes.find((a: { name: string }) => a.name === 'id')).toMatchObject({ protected: true, system: true });
    expect((await s.call('GET', '/schema/objects/company')).body.data.id).toBe(obj.id);
    expect((await s.call('GET', `/schema/objects/${obj.id}`)).body.data.name).toBe('company');
    const list = await s.call('GET', '/schema/objects');
    expect(list.body.data.map((o: { name: string }) => o.name)).toContain('company');
    expect(list.body.page).toEqual({ nextCursor: null, total: list.body.data.length });
  });

  it('refuses bad, reserved and duplicate names with their codes', async () => {
    expectError(await post('/schema/objects', { name: 'Bad-Name' }), { status: 400, code: 'SCHEMA_INVALID_OBJECT_NAME' });
    expectError(await post('/schema/objects', { name: 'skill' }), { status: 400, code: 'SCHEMA_RESERVED_OBJECT_NAME' });
    expectError(await post('/schema/objects', { name: 'company' }), { status: 409, code: 'SCHEMA_DUPLICATE_OBJECT' });
    expectError(await post('/schema/objects', { name: 'thing', attributes: [{ name: '9lives', type: 'text' }] }), {
      status: 400,
      code: 'SCHEMA_INVALID_ATTRIBUTE_NAME',
    });
    expectError(await s.call('GET', '/schema/objects/nothing_here'), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
  });
});

describe('attributes', () => {
  it('adds, updates and deletes a runtime attribute', async () => {
    const a = await post('/schema/objects/company/attributes', { name: 'website', type: 'url' });
    expect(a.status).toBe(201);
    expect(a.body.data).toMatchObject({ name: 'website', type: 'url', owner: { kind: 'runtime' } });
    const u = await s.call('PUT', '/schema/objects/company/attributes/website', { body: { label: 'Web site' } });
    expect(u.status).toBe(200);
    expect(u.body.data.label).toBe('Web site');
    const d = await s.call('DELETE', `/schema/objects/company/attributes/${a.body.data.id}`);
    expect(d.body).toEqual({ success: true, data: { id: a.body.data.id } });
    expectError(await s.call('PUT', '/schema/objects/company/attributes/website', { body: { label: 'x' } }), {
      status: 404,
      code: 'SCHEMA_ATTRIBUTE_NOT_FOUND',
    });
  });

  it('refuses duplicates, bad names, protected attributes and unknown objects', async () => {
    expectError(await post('/schema/objects/company/attributes', { name: 'name', type: 'text' }), { status: 409, code: 'SCHEMA_DUPLICATE_ATTRIBUTE' });
    expectError(await post('/schema/objects/company/attributes', { name: 'Name!', type: 'text' }), { status: 400, code: 'SCHEMA_INVALID_ATTRIBUTE_NAME' });
    expectError(await s.call('PUT', '/schema/objects/company/attributes/id', { body: { label: 'x' } }), { status: 403, code: 'SCHEMA_PROTECTED_ATTRIBUTE' });
    expectError(await s.call('DELETE', '/schema/objects/company/attributes/created_at'), { status: 403, code: 'SCHEMA_PROTECTED_ATTRIBUTE' });
    expectError(await s.call('PUT', '/schema/objects/nope/attributes/name', { body: { label: 'x' } }), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
    expectError(await s.call('PUT', '/schema/objects/company/attributes/name', { body: { name: 'Bad Name' } }), {
      status: 400,
      code: 'SCHEMA_INVALID_ATTRIBUTE_NAME',
    });
  });

  it('refuses an attribute change that stored data breaks', async () => {
    await post('/schema/objects/company/attributes', { name: 'city', type: 'text' });
    await post('/records/company', { name: 'NoCity' });
    const r = await s.call('PUT', '/schema/objects/company/attributes/city', { body: { required: true } });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(['SCHEMA_VALIDATION_FAILED', 'SCHEMA_SYNC_CONFLICT']).toContain(r.body.code);
    expect((await s.call('GET', '/schema/objects/company')).body.data.attributes.find((a: { name: string }) => a.name === 'city').required).not.toBe(true);
  });
});

describe('required over stored nulls with a default (the planner\'s backfill rule)', () => {
  const attr = async (object: string, name: string) =>
    (await s.call('GET', `/schema/objects/${object}`)).body.data.attributes.find((a: { name: string }) => a.name === name);
  const record = async (object: string, id: string) => (await s.call('GET', `/records/${object}/${id}`)).body.data;
  const make = async (object: string, rows: Record<string, unknown>[]): Promise<string[]> => {
    expect((await post('/schema/objects', { name: object, attributes: [{ name: 'title', type: 'text' }, { name: 'stage', type: 'text' }] })).status).toBe(201);
    const ids: string[] = [];
    for (const values of rows) ids.push((await post(`/records/${object}`, values)).body.data.id);
    return ids;
  };

  it('PUT …/attributes/:id to required with a default fills the nulls in the same change', async () => {
    const [won, a, b] = await make('bf_deal', [{ title: 'w', stage: 'won' }, { title: 'a' }, { title: 'b' }]);
    const before = await record('bf_deal', a!);
    const r = await s.call('PUT', '/schema/objects/bf_deal/attributes/stage', { body: { required: true, default: 'lead' } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ name: 'stage', required: true, default: 'lead' });
    expect([(await record('bf_deal', won!)).values.stage, (await record('bf_deal', a!)).values.stage, (await record('bf_deal', b!)).values.stage]).toEqual([
      'won',
      'lead',
      'lead',
    ]);
    // a filled record is a changed record (as after a push's backfill)
    expect((await record('bf_deal', a!)).version).toBe(before.version + 1);
    expect((await record('bf_deal', won!)).version).toBe(1);
  });

  it('without a default it is still refused, naming the count; nothing changes', async () => {
    const [, a] = await make('bf_nodefault', [{ title: 'w', stage: 'won' }, { title: 'a' }, { title: 'b' }]);
    const r = await s.call('PUT', '/schema/objects/bf_nodefault/attributes/stage', { body: { required: true } });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: /^2 records \(e\.g\. .+\) have no value for bf_nodefault\.stage, which is now required/ });
    expect(r.body.errors).toEqual([{ path: ['stage'], message: r.body.message }]);
    expect((await attr('bf_nodefault', 'stage')).required).not.toBe(true);
    expect((await record('bf_nodefault', a!)).values.stage).toBeNull();
  });

  it('unique with a default and two empty values is refused: they would share the default', async () => {
    const [, a, b] = await make('bf_unique', [{ title: 'w', stage: 'won' }, { title: 'a' }, { title: 'b' }]);
    const r = await s.call('PUT', '/schema/objects/bf_unique/attributes/stage', { body: { required: true, unique: true, default: 'lead' } });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: /^2 records .* bf_unique\.stage is now unique/ });
    expect(r.body.errors).toEqual([{ path: ['stage'], message: r.body.message }]);
    expect(await attr('bf_unique', 'stage')).not.toHaveProperty('required');
    expect((await record('bf_unique', a!)).values.stage).toBeNull();
    // with one empty value the default is taken once: allowed and filled
    await s.call('DELETE', `/records/bf_unique/${a}`);
    expect((await s.call('PUT', '/schema/objects/bf_unique/attributes/stage', { body: { required: true, unique: true, default: 'lead' } })).status).toBe(200);
    expect((await record('bf_unique', b!)).values.stage).toBe('lead');
  });

  it('POST …/attributes required with a default over stored records gives them all the default', async () => {
    const [a, b] = await make('bf_add', [{ title: 'a' }, { title: 'b' }]);
    expect((await post('/schema/objects/bf_add/attributes', { name: 'region', type: 'text', required: true, default: 'eu' })).status).toBe(201);
    expect([(await record('bf_add', a!)).values.region, (await record('bf_add', b!)).values.region]).toEqual(['eu', 'eu']);
    expectError(await post('/schema/objects/bf_add/attributes', { name: 'zone', type: 'text', required: true }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: /^2 records/ });
    expectError(await post('/schema/objects/bf_add/attributes', { name: 'slot', type: 'text', unique: true, default: 'x' }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED' });
  });
});

describe('deleting objects', () => {
  it('refuses referenced (409) and non-empty objects unless forced', async () => {
    await post('/schema/objects', { name: 'deal', attributes: [{ name: 'company', type: 'relation', target: 'company' }] });
    expectError(await s.call('DELETE', '/schema/objects/company'), { status: 409, code: 'SCHEMA_OBJECT_REFERENCED' });
    await post('/records/deal', {});
    expectError(await s.call('DELETE', '/schema/objects/deal'), { status: 409, code: 'SCHEMA_CONFLICT' });
    const forced = await s.call('DELETE', '/schema/objects/deal?force=true');
    expect(forced.status).toBe(200);
    expect(forced.body.data.id).toEqual(expect.any(String));
    expectError(await s.call('GET', '/schema/objects/deal'), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
  });
});

describe('keys, views and sources', () => {
  it('refuses revoking the last owner key with 400 SCHEMA_VALIDATION_FAILED', async () => {
    const owners = (await s.store.listKeys()).filter((k) => k.role === 'owner' && !k.revokedAt);
    expect(owners).toHaveLength(1);
    expectError(await s.call('DELETE', `/keys/${owners[0]!.id}`), { status: 400, code: 'SCHEMA_VALIDATION_FAILED' });
    const created = await post('/keys', { name: 'reader', role: 'viewer' });
    expect(created.status).toBe(201);
    expect(created.body.data.secret).toEqual(expect.any(String));
    const list = await s.call('GET', '/keys');
    expect(list.text).not.toContain(created.body.data.secret);
  });

  it('an unknown view or source is a 404', async () => {
    expect((await s.call('GET', '/views')).body).toMatchObject({ success: true, data: [], page: { nextCursor: null } });
    expectError(await s.call('GET', '/views/open_deals'), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
    expectError(await s.call('GET', '/schema/sources/crm'), { status: 404, code: 'SCHEMA_SOURCE_NOT_FOUND' });
  });
});

describe('protected objects', () => {
  it.skipIf(sqliteOnly('sets the protected flag in the SQLite file between two starts, which no route can'))('a system-protected object refuses deletion and attribute changes with 403 SCHEMA_PROTECTED_OBJECT', async () => {
    // No route makes an object protected (core and bundle objects are seeded by the
    // platform), so the flag is set in the database file between two starts.
    const first = await startTestServer({ keepData: true });
    await first.defineObject('core_user', [{ name: 'email', type: 'email' }]);
    await first.app.close();
    await first.store.close();
    const db = new Database(join(first.dataDir, 'schemasync.db'));
    db.prepare('UPDATE _ss_objects SET protected = 1 WHERE name = ?').run('core_user');
    db.close();
    const again = await startTestServer({ dataDir: first.dataDir });
    try {
      expect((await again.call('GET', '/schema/objects/core_user')).body.data.protected).toBe(true);
      expectError(await again.call('DELETE', '/schema/objects/core_user'), { status: 403, code: 'SCHEMA_PROTECTED_OBJECT' });
      expectError(await again.call('POST', '/schema/objects/core_user/attributes', { body: { name: 'nick', type: 'text' } }), {
        status: 403,
        code: 'SCHEMA_PROTECTED_OBJECT',
      });
    } finally {
      await again.close();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
