import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../api/helpers.js';
import { cli } from './plan-suite.js';
import { tempProject } from './watch-helpers.js';

// Roles as code from the command line (contract.md §2 `roles:`, §4 `roles`): validate
// offline at file:line:col, plan/sync/pull with objects and views, and the roles command.
// Needs `npm run build`.

const OBJECTS = `objects:
  company:
    attributes:
      name: { type: text }
  deal:
    attributes:
      title: { type: text }
`;
const ROLES = (dealActions: string, extra = '') => `roles:
  sales:
    label: Sales
    permissions:
      - { object: deal, actions: [${dealActions}] }
      - { object: company, actions: [read] }
${extra}`;

describe('roles as code (CLI)', () => {
  let s: TestServer;
  let dir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    s = await startTestServer({ logger: false });
    dir = tempProject({ 'crm.yaml': OBJECTS, 'roles.yaml': ROLES('read, create, update', '  legacy:\n    permissions: [{ object: "*", actions: [read] }]\n') });
    env = { SCHEMASYNC_BASE_URL: s.base, SCHEMASYNC_API_KEY: s.ownerKey };
  });
  afterAll(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('validate reports role mistakes at file:line:col with the near miss', async () => {
    const bad = tempProject({ 'crm.yaml': OBJECTS, 'roles.yaml': 'roles:\n  sales:\n    permissions:\n      - { object: dael, actions: [raed] }\n  viewer:\n    permissions: []\n' });
    const r = await cli(['validate'], bad, env);
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain('schema/roles.yaml:4:19 warning Role "sales" grants on object "dael", which is not declared in these files (the push checks the instance) (did you mean "deal"?)');
    expect(r.out + r.err).toMatch(/schema\/roles\.yaml:4:35 error SCHEMA_VALIDATION_FAILED Role "sales": "permissions\.0\.actions\.0" is "raed" but must be one of read, create, update, delete \(did you mean "read"\?\)/);
    expect(r.out + r.err).toContain('schema/roles.yaml:5:3 error SCHEMA_SYSTEM_ENTITY_IMMUTABLE The role "viewer" is built in and cannot be declared');
    rmSync(bad, { recursive: true, force: true });
  });

  it('plan shows + role, sync applies it with the objects; a change reads "~ role sales: deal +delete"; a drop "- role legacy"; pull writes roles.yaml', async () => {
    const p = await cli(['plan'], dir, env);
    expect(p.out).toContain('+ role sales: deal read,create,update; company read');
    expect(p.out).toContain('+ role legacy: * read');
    expect(p.out).toMatch(/Plan: 4 to create, 0 to change, 0 to drop\./);
    expect((await cli(['sync'], dir, env)).code).toBe(0);

    const key = await cli(['--base-url', s.base, '--api-key', s.ownerKey, 'keys', 'create', 'ann', '--role', 'sales', '--json'], dir);
    expect(key.code, key.err).toBe(0);
    const secret = (JSON.parse(key.out) as { secret: string }).secret;
    expect((await s.call('POST', '/records/deal', { key: secret, body: { title: 'x' } })).status).toBe(201);

    writeFileSync(join(dir, 'schema', 'roles.yaml'), ROLES('read, create, update, delete'));
    const p2 = await cli(['plan'], dir, env);
    expect(p2.out).toContain('~ role sales: deal +delete');
    expect(p2.out).toContain('- role legacy');
    expect((await cli(['sync'], dir, env)).code).toBe(0);
    const id = (await s.call('POST', '/records/deal', { key: secret, body: { title: 'y' } })).body.data.id;
    expect((await s.call('DELETE', `/records/deal/${id}`, { key: secret })).status).toBe(200);

    const pulled = join(dir, 'pulled');
    expect((await cli(['pull', '--out', pulled], dir, env)).code).toBe(0);
    expect(existsSync(join(pulled, 'roles.yaml'))).toBe(true);
    expect(readFileSync(join(pulled, 'roles.yaml'), 'utf8')).toContain('sales:');
    // what pull wrote plans to nothing
    const again = tempProject({});
    rmSync(join(again, 'schema'), { recursive: true, force: true });
    writeFileSync(join(again, 'schemasync.yaml'), 'source: crm\nschema: pulled\n');
    const { cpSync } = await import('node:fs');
    cpSync(pulled, join(again, 'pulled'), { recursive: true });
    const none = await cli(['plan', '--detailed-exitcode'], again, env);
    expect(none.out, none.err).toMatch(/No changes/);
    expect(none.code).toBe(0);
  });

  it('roles list|get|create|update|delete', async () => {
    const g = ['--base-url', s.base, '--api-key', s.ownerKey];
    const made = await cli([...g, 'roles', 'create', 'auditor', '--allow', 'deal:read', '--allow', 'company:read', '--schema', 'read'], dir);
    expect(made.err).toBe('');
    expect(made.out).toBe('created role auditor: deal:read company:read; schema read\n');
    const list = await cli([...g, 'roles', 'list'], dir);
    expect(list.out).toMatch(/^NAME\s+OWNER\s+SCHEMA\s+RECORDS\s+KEYS$/m);
    expect(list.out).toMatch(/^member\s+built in\s+read\s+\*:read,create,update,delete\s+none$/m);
    expect(list.out).toMatch(/^auditor\s+runtime\s+read\s+deal:read company:read\s+none$/m);
    expect(list.out).toMatch(/^sales\s+source crm\s+none\s+deal:read,create,update,delete company:read\s+none$/m);
    // What an update does not name keeps its value (the route replaces the whole role).
    const upd = await cli([...g, 'roles', 'update', 'auditor', '--allow', '*:read'], dir);
    expect(upd.out).toBe('updated role auditor: *:read; schema read\n');
    const relabel = await cli([...g, 'roles', 'update', 'auditor', '--label', 'Auditors'], dir);
    expect(relabel.out).toBe('updated role auditor: *:read; schema read\n');
    expect((await s.call('GET', '/roles/auditor')).body.data).toMatchObject({ label: 'Auditors', schema: 'read', permissions: [{ object: '*', actions: ['read'] }] });
    // --data is the role as JSON (not a data folder, as it is for sync); flags override its fields.
    const fromJson = await cli([...g, 'roles', 'create', 'clerk', '--data', '{"schema":"read","permissions":[{"object":"deal","actions":["read","create"]}]}', '--label', 'Clerks'], dir);
    expect(fromJson.err).toBe('');
    expect(fromJson.out).toBe('created role clerk: deal:read,create; schema read\n');
    const view = await cli([...g, 'views', 'put', 'open_deals', '--data', '{"object":"deal","columns":["title"]}'], dir);
    expect(view.err).toBe('');
    expect((await s.call('GET', '/views/open_deals')).body.data).toMatchObject({ object: 'deal', columns: ['title'] });
    expect((await cli([...g, 'roles', 'delete', 'clerk'], dir)).code).toBe(0);
    const declared = await cli([...g, 'roles', 'delete', 'sales'], dir);
    expect(declared.code).toBe(1);
    expect(declared.err).toMatch(/^Error: 409 SCHEMA_DUPLICATE: The role "sales" is owned by source "crm"/m);
    const builtin = await cli([...g, 'roles', 'update', 'owner', '--allow', 'deal:read'], dir);
    expect(builtin.err).toMatch(/^Error: 403 SCHEMA_SYSTEM_ENTITY_IMMUTABLE: /m);
    const badAllow = await cli([...g, 'roles', 'create', 'x', '--allow', 'deal:raed'], dir);
    expect(badAllow.err).toContain('unknown action "raed"');
    expect((await cli([...g, 'roles', 'delete', 'auditor'], dir)).out).toBe('deleted role auditor\n');
    const gone = await cli([...g, 'roles', 'get', 'auditor'], dir);
    expect(gone.err).toMatch(/^Error: 404 SCHEMA_ROLE_NOT_FOUND: /m);
  });
});
