import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    const owners = s.store.listKeys().filter((k) => k.role === 'owner' && !k.revokedAt);
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
  it('a system-protected object refuses deletion and attribute changes with 403 SCHEMA_PROTECTED_OBJECT', async () => {
    // No route makes an object protected (core and bundle objects are seeded by the
    // platform), so the flag is set in the database file between two starts.
    const first = await startTestServer({ keepData: true });
    expect((await first.call('POST', '/schema/objects', { body: { name: 'core_user', attributes: [{ name: 'email', type: 'email' }] } })).status).toBe(201);
    await first.app.close();
    first.store.close();
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
