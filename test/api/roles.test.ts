import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// Custom roles at runtime and what their keys may do (contract.md §3 "Roles, keys, views"
// and the role table's "custom" row).

const FORBIDDEN = 'You do not have permission to perform this action.';
const SALES = {
  name: 'sales',
  label: 'Sales',
  permissions: [
    { object: 'deal', actions: ['read', 'create', 'update'] },
    { object: 'company', actions: ['read'] },
  ],
};

describe('roles', () => {
  let s: TestServer;
  beforeEach(async () => {
    s = await startTestServer({ logger: false });
    await s.defineObject('company', [{ name: 'name', type: 'text' }]);
    await s.defineObject('deal', [{ name: 'title', type: 'text' }, { name: 'company', type: 'relation', target: 'company' }]);
  });
  afterEach(async () => s.close());

  const salesKey = async (): Promise<{ id: string; secret: string }> => {
    expect((await s.call('POST', '/roles', { body: SALES })).status).toBe(201);
    const key = await s.call('POST', '/keys', { body: { name: 'ann', role: 'sales' } });
    expect(key.status).toBe(201);
    return key.body.data;
  };

  it('lists the built-in roles in the shape of a custom one, then the custom ones', async () => {
    const before = await s.call('GET', '/roles');
    expect(before.body.data.map((r: { name: string }) => r.name)).toEqual(['owner', 'admin', 'member', 'viewer']);
    expect(before.body.data[2]).toEqual({
      name: 'member', builtIn: true, owner: { kind: 'core' }, schema: 'read', keys: 'none',
      permissions: [{ object: '*', actions: ['read', 'create', 'update', 'delete'] }],
    });
    expect(before.body.data[3].permissions).toEqual([{ object: '*', actions: ['read'] }]);
    expect(before.body.data[0]).toMatchObject({ schema: 'write', keys: 'manage' });
    const made = await s.call('POST', '/roles', { body: SALES });
    expect(made.status).toBe(201);
    expect(made.body.data).toEqual({ ...SALES, builtIn: false, schema: 'none', keys: 'none', owner: { kind: 'runtime' } });
    expect((await s.call('GET', '/roles/sales')).body.data).toEqual(made.body.data);
    expect((await s.call('GET', '/roles')).body.page.total).toBe(5);
  });

  it('a key of a custom role may do exactly what the role grants, per object', async () => {
    const { secret } = await salesKey();
    const acme = await s.call('POST', '/records/company', { body: { name: 'Acme' } });
    const deal = await s.call('POST', '/records/deal', { key: secret, body: { title: 'big', company: acme.body.data.id } });
    expect(deal.status).toBe(201);
    const id = deal.body.data.id;
    expect((await s.call('GET', `/records/deal/${id}`, { key: secret })).status).toBe(200);
    expect((await s.call('PUT', `/records/deal/${id}`, { key: secret, body: { title: 'bigger' }, headers: { 'if-match': '*' } })).status).toBe(200);
    expect((await s.call('POST', '/records/company/search', { key: secret, body: {} })).status).toBe(200);
    for (const [method, path, body] of [
      ['DELETE', `/records/deal/${id}`, undefined],
      ['POST', '/records/deal/bulk-delete', { ids: [id] }],
      ['POST', '/records/company', { name: 'Other' }],
      ['GET', '/schema/objects', undefined],
      ['POST', '/keys', { name: 'x', role: 'viewer' }],
      ['POST', '/roles', { ...SALES, name: 'sales2' }],
    ] as const) {
      expectError(await s.call(method, path, { key: secret, ...(body ? { body } : {}) }), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN });
    }
    expect((await s.call('GET', '/roles', { key: secret })).status).toBe(403);
  });

  it('a changed role governs the very next request; a role with keys cannot be deleted until they are revoked', async () => {
    const { id: keyId, secret } = await salesKey();
    const acme = (await s.call('POST', '/records/company', { body: { name: 'Acme' } })).body.data;
    expectError(await s.call('DELETE', `/records/company/${acme.id}`, { key: secret }), { status: 403, code: 'SCHEMA_FORBIDDEN' });
    const widened = await s.call('PUT', '/roles/sales', { body: { permissions: [{ object: '*', actions: ['read', 'delete'] }], schema: 'read' } });
    expect(widened.status).toBe(200);
    expect((await s.call('DELETE', `/records/company/${acme.id}`, { key: secret })).status).toBe(200);
    expect((await s.call('GET', '/schema/objects', { key: secret })).status).toBe(200);

    const refused = await s.call('DELETE', '/roles/sales');
    expectError(refused, { status: 409, code: 'SCHEMA_CONFLICT', message: new RegExp(`held by 1 active key: ${keyId} "ann"`) });
    expect((await s.call('DELETE', `/keys/${keyId}`)).status).toBe(200);
    expect((await s.call('DELETE', '/roles/sales')).status).toBe(200);
    expectError(await s.call('GET', '/roles/sales'), { status: 404, code: 'SCHEMA_ROLE_NOT_FOUND' });
  });

  it('built-in roles cannot change; unknown roles are 404; bad input is 400 at its path', async () => {
    expectError(await s.call('PUT', '/roles/member', { body: { permissions: [] } }), { status: 403, code: 'SCHEMA_SYSTEM_ENTITY_IMMUTABLE' });
    expectError(await s.call('DELETE', '/roles/owner'), { status: 403, code: 'SCHEMA_SYSTEM_ENTITY_IMMUTABLE' });
    expectError(await s.call('POST', '/roles', { body: { ...SALES, name: 'viewer' } }), { status: 403, code: 'SCHEMA_SYSTEM_ENTITY_IMMUTABLE' });
    for (const [method, body] of [['GET', undefined], ['PUT', { permissions: [] }], ['DELETE', undefined]] as const) {
      expectError(await s.call(method, '/roles/nosuch', body ? { body } : {}), { status: 404, code: 'SCHEMA_ROLE_NOT_FOUND' });
    }
    expectError(await s.call('POST', '/keys', { body: { name: 'k', role: 'nosuch' } }), { status: 404, code: 'SCHEMA_ROLE_NOT_FOUND' });
    const badObject = await s.call('POST', '/roles', { body: { name: 'r', permissions: [{ object: 'dael', actions: ['read'] }] } });
    expectError(badObject, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(badObject.body.errors).toEqual([{ path: ['permissions', 0, 'object'], message: 'no object named "dael" (did you mean "deal"?)' }]);
    expectError(await s.call('POST', '/roles', { body: { name: 'Bad-Name', permissions: [] } }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expectError(await s.call('POST', '/roles', { body: { name: 'r', permissions: [{ object: 'deal', actions: ['raed'] }] } }), { status: 400, errors: true });
    expect((await s.call('POST', '/roles', { body: SALES })).status).toBe(201);
    expectError(await s.call('POST', '/roles', { body: SALES }), { status: 409, code: 'SCHEMA_CONFLICT' });
  });

  it('who manages roles and their keys: owner and admin; member and viewer cannot', async () => {
    const admin = await s.keyFor('admin');
    expect((await s.call('POST', '/roles', { key: admin, body: SALES })).status).toBe(201);
    expect((await s.call('POST', '/keys', { key: admin, body: { name: 'a', role: 'sales' } })).status).toBe(201);
    for (const role of ['member', 'viewer']) {
      const k = await s.keyFor(role);
      expect((await s.call('GET', '/roles', { key: k })).status).toBe(200);
      expectError(await s.call('PUT', '/roles/sales', { key: k, body: { permissions: [] } }), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN });
      expectError(await s.call('POST', '/keys', { key: k, body: { name: 'b', role: 'sales' } }), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN });
    }
  });
});
