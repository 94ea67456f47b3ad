import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// Roles as code (contract.md §2 `roles:`, §3 push): planned and applied with objects and
// views in one transaction and one source version.

const objects = {
  company: { attributes: { name: { type: 'text' } } },
  deal: { attributes: { title: { type: 'text' }, amount: { type: 'number' } } },
};
const sales = { label: 'Sales', permissions: [{ object: 'deal', actions: ['read', 'create', 'update'] }, { object: 'company', actions: ['read'] }] };

describe('roles in a push', () => {
  let s: TestServer;
  beforeEach(async () => {
    s = await startTestServer({ logger: false });
  });
  afterEach(async () => s.close());

  const push = (declaration: unknown, extra: Record<string, unknown> = {}) => s.call('PUT', '/schema/sources/crm', { body: { declaration, ...extra } });
  const plan = async (declaration: unknown) => (await push(declaration, { dryRun: true })).body.data.plan;

  it('creates, changes, renames (keys follow) and drops roles, each in the plan', async () => {
    const p1 = await plan({ objects, views: {}, roles: { sales } });
    expect(p1.steps.filter((x: { target: string }) => x.target.startsWith('role:'))).toEqual([
      expect.objectContaining({ action: 'create_role', target: 'role:sales', destructive: false }),
    ]);
    expect((await push({ objects, views: {}, roles: { sales } })).body.data.version).toBe(1);
    const role = (await s.call('GET', '/roles/sales')).body.data;
    expect(role).toMatchObject({ builtIn: false, owner: { kind: 'source', id: 'crm' }, schema: 'none', permissions: sales.permissions });
    expect((await s.call('GET', '/schema/sources/crm')).body.data.roles).toEqual(['sales']);

    // a key of the declared role works at once
    const key = (await s.call('POST', '/keys', { body: { name: 'ann', role: 'sales' } })).body.data;
    expect((await s.call('POST', '/records/deal', { key: key.secret, body: { title: 'x' } })).status).toBe(201);
    expectError(await s.call('POST', '/records/company', { key: key.secret, body: { name: 'x' } }), { status: 403, code: 'SCHEMA_FORBIDDEN' });

    const wider = { ...sales, permissions: [{ object: 'deal', actions: ['read', 'create', 'update', 'delete'] }, { object: 'company', actions: ['read'] }] };
    const p2 = await plan({ objects, views: {}, roles: { sales: wider } });
    expect(p2.steps).toEqual([expect.objectContaining({ action: 'change_role', target: 'role:sales' })]);

    // renamedFrom keeps the keys; the runtime route cannot touch a declared role
    expectError(await s.call('PUT', '/roles/sales', { body: { permissions: [] } }), { status: 409, code: 'SCHEMA_DUPLICATE' });
    const renamed = await push({ objects, views: {}, roles: { sellers: { ...wider, renamedFrom: 'sales' } } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.plan.steps.map((x: { action: string }) => x.action)).toEqual(['rename_role', 'change_role']);
    expect((await s.call('GET', '/keys')).body.data.find((k: { id: string }) => k.id === key.id).role).toBe('sellers');
    expect((await s.call('GET', '/records/deal/' + (await s.call('POST', '/records/deal', { key: key.secret, body: { title: 'y' } })).body.data.id, { key: key.secret })).status).toBe(200);

    // dropping a role that a key holds is a conflict naming the key; once revoked it drops
    const dropPlan = await plan({ objects, views: {}, roles: {} });
    expect(dropPlan.conflicts).toEqual([
      expect.objectContaining({ code: 'SCHEMA_SYNC_CONFLICT', target: 'role:sellers', message: expect.stringContaining(`${key.id} "ann"`), fix: expect.stringContaining('revoke') }),
    ]);
    expectError(await push({ objects, views: {}, roles: {} }), { status: 409, code: 'SCHEMA_SYNC_CONFLICT' });
    await s.call('DELETE', `/keys/${key.id}`);
    const dropped = await push({ objects, views: {}, roles: {} });
    expect(dropped.body.data.plan.steps).toEqual([expect.objectContaining({ action: 'drop_role', target: 'role:sellers' })]);
    expectError(await s.call('GET', '/roles/sellers'), { status: 404, code: 'SCHEMA_ROLE_NOT_FOUND' });
  });

  it('a push with role steps needs the right to manage keys: a custom role with schema write cannot widen itself', async () => {
    expect((await push({ objects, views: {} })).status).toBe(200);
    expect((await s.call('POST', '/roles', { body: { name: 'schemer', schema: 'write', permissions: [{ object: 'deal', actions: ['read'] }] } })).status).toBe(201);
    const key = (await s.call('POST', '/keys', { body: { name: 'sam', role: 'schemer' } })).body.data.secret as string;
    const pushAs = (declaration: unknown, extra: Record<string, unknown> = {}) => s.call('PUT', '/schema/sources/evil', { key, body: { declaration, ...extra } });
    const everything = { schema: 'write', permissions: [{ object: '*', actions: ['read', 'create', 'update', 'delete'] }] };
    // adopting its own runtime role, and creating a new one: refused, nothing written
    for (const roles of [{ schemer: everything }, { pwn: everything }]) {
      const r = await pushAs({ objects: {}, views: {}, roles });
      expectError(r, { status: 403, code: 'SCHEMA_FORBIDDEN' });
    }
    expect((await s.call('GET', '/roles/schemer')).body.data.permissions).toEqual([{ object: 'deal', actions: ['read'] }]);
    expectError(await s.call('GET', '/roles/pwn'), { status: 404, code: 'SCHEMA_ROLE_NOT_FOUND' });
    expectError(await s.call('GET', '/schema/sources/evil'), { status: 404, code: 'SCHEMA_SOURCE_NOT_FOUND' });
    expectError(await s.call('POST', '/records/company', { key, body: { name: 'x' } }), { status: 403, code: 'SCHEMA_FORBIDDEN' });
    // a dry run still shows the steps; a push without role steps still applies
    expect((await pushAs({ objects: {}, views: {}, roles: { pwn: everything } }, { dryRun: true })).body.data.plan.steps).toEqual([expect.objectContaining({ action: 'create_role' })]);
    expect((await pushAs({ objects: { memo: { attributes: { body: { type: 'text' } } } }, views: {} })).status).toBe(200);
    // An admin key scoped to the schema (the CI key of docs/ci.md) pushes roles: its role may manage keys.
    const ci = (await s.call('POST', '/keys', { body: { name: 'ci', role: 'admin', scopes: ['schema:read', 'schema:write'] } })).body.data.secret as string;
    const byCi = await s.call('PUT', '/schema/sources/crm', { key: ci, body: { declaration: { objects, views: {}, roles: { sales } } } });
    expect(byCi.status, byCi.text).toBe(200);
    expect((await s.call('GET', '/roles/sales')).body.data.owner).toEqual({ kind: 'source', id: 'crm' });
  });

  it('an object rename rewrites every role that names it; a role of another source is SCHEMA_DUPLICATE; built-ins cannot be declared', async () => {
    await push({ objects, views: {}, roles: { sales } });
    await s.call('POST', '/roles', { body: { name: 'auditor', permissions: [{ object: 'deal', actions: ['read'] }] } });
    const renamedObjects = { company: objects.company, opportunity: { ...objects.deal, renamedFrom: 'deal' } };
    const salesRenamed = { ...sales, permissions: [{ object: 'opportunity', actions: ['read', 'create', 'update'] }, sales.permissions[1]] };
    expect((await push({ objects: renamedObjects, views: {}, roles: { sales: salesRenamed } })).status).toBe(200);
    expect((await s.call('GET', '/roles/auditor')).body.data.permissions).toEqual([{ object: 'opportunity', actions: ['read'] }]);

    const other = await s.call('PUT', '/schema/sources/billing', { body: { declaration: { objects: {}, views: {}, roles: { sales: salesRenamed } }, dryRun: true } });
    expect(other.body.data.plan.conflicts).toEqual([expect.objectContaining({ code: 'SCHEMA_DUPLICATE', target: 'role:sales' })]);

    const builtin = await push({ objects: renamedObjects, views: {}, roles: { member: sales } });
    expectError(builtin, { status: 403, code: 'SCHEMA_SYSTEM_ENTITY_IMMUTABLE', message: /role "member" is built in/ });
    const unknown = await push({ objects: renamedObjects, views: {}, roles: { x: { permissions: [{ object: 'opportunty', actions: ['read'] }] } } });
    expectError(unknown, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(unknown.body.errors[0]).toEqual({ path: ['declaration', 'roles', 'x', 'permissions', 0, 'object'], message: expect.stringContaining('(did you mean "opportunity"?)') });
    // a stored (runtime) object may be named though the declaration does not declare it
    await s.defineObject('note', [{ name: 'body', type: 'text' }]);
    expect((await push({ objects: renamedObjects, views: {}, roles: { sales: salesRenamed, notes: { permissions: [{ object: 'note', actions: ['read'] }] } } })).status).toBe(200);
  });

  it('a push that changes an object, a view and a role applies all three with one version bump, or none when it fails partway', async () => {
    await push({ objects, views: {}, roles: {} });
    const next = {
      objects: { ...objects, deal: { attributes: { ...objects.deal.attributes, stage: { type: 'text' } } } },
      views: { big: { object: 'deal', columns: ['title', 'stage'] } },
      roles: { boom: sales },
    };
    // A real failure inside the apply: the role row is the last write of the transaction.
    const db = new Database(join(s.dataDir, 'schemasync.db'));
    db.exec("CREATE TRIGGER fail_role BEFORE INSERT ON _ss_roles WHEN NEW.name = 'boom' BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
    expectError(await push(next), { status: 500, code: 'SCHEMA_SYNC_FAILED', message: 'Internal server error' });
    const source = (await s.call('GET', '/schema/sources/crm')).body.data;
    expect(source.version).toBe(1);
    expect((await s.call('GET', '/schema/objects/deal')).body.data.attributes.map((a: { name: string }) => a.name)).not.toContain('stage');
    expect((await s.call('GET', '/views')).body.data).toEqual([]);
    db.exec('DROP TRIGGER fail_role');
    db.close();
    const ok = await push(next);
    expect(ok.body.data.version).toBe(2);
    expect((await s.call('GET', '/roles/boom')).status).toBe(200);
    expect((await s.call('GET', '/views/big')).status).toBe(200);
  });

  it('a declared role that still names an object by the name the same push renames follows the rename', async () => {
    await push({ objects, views: {}, roles: { sales } });
    const renamedObjects = { company: objects.company, opportunity: { ...objects.deal, renamedFrom: 'deal' } };
    // The files still say `deal` in the role, which the same push also widens: the role's
    // permission follows the object's rename (contract.md §2) rather than naming the old name.
    const wider = { ...sales, permissions: [{ object: 'deal', actions: ['read', 'create', 'update', 'delete'] }, sales.permissions[1]] };
    expect((await push({ objects: renamedObjects, views: {}, roles: { sales: wider } })).status).toBe(200);
    expect((await s.call('GET', '/roles/sales')).body.data.permissions).toEqual([
      { object: 'opportunity', actions: ['read', 'create', 'update', 'delete'] },
      { object: 'company', actions: ['read'] },
    ]);
    // and the next push of the updated files plans nothing for the role
    const salesRenamed = { ...sales, permissions: [{ object: 'opportunity', actions: ['read', 'create', 'update', 'delete'] }, sales.permissions[1]] };
    expect((await plan({ objects: renamedObjects, views: {}, roles: { sales: salesRenamed } })).steps).toEqual([]);
  });

  it('a runtime role that grants on an object the push drops is a conflict', async () => {
    await push({ objects, views: {}, roles: {} });
    await s.call('POST', '/roles', { body: { name: 'auditor', permissions: [{ object: 'deal', actions: ['read'] }] } });
    const p = await plan({ objects: { company: objects.company }, views: {}, roles: {} });
    expect(p.conflicts).toEqual([expect.objectContaining({ code: 'SCHEMA_SYNC_CONFLICT', target: 'role:auditor', message: expect.stringContaining('grants access to deal') })]);
  });
});
