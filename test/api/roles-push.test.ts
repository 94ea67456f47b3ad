import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORBIDDEN_MESSAGE } from '../../engine/errors.js';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// contract.md §3 role table: a dry-run push writes nothing and needs schema READ; a real
// push needs schema write. Over real HTTP on a real SQLite file.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s.close());

const declaration = { objects: { lead: { attributes: { name: { type: 'text' } } } }, views: {} };
const push = (key: string, dryRun: boolean) => s.call('PUT', '/schema/sources/crm', { key, body: { declaration, dryRun } });

describe('who may plan and who may push (contract.md §3)', () => {
  it.each([
    ['member', null],
    ['viewer', null],
    ['member', ['schema:read']],
    ['owner', ['schema:read']],
  ] as const)('a %s key with scopes %j may plan (dry run) but not push', async (role, scopes) => {
    const key = await s.keyFor(role, scopes === null ? null : [...scopes]);
    const dry = await push(key, true);
    expect(dry.status).toBe(200);
    expect(dry.body.data.applied).toBe(false);
    expect(dry.body.data.plan.steps.map((st: { target: string }) => st.target)).toContain('lead');
    expectError(await push(key, false), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN_MESSAGE, errors: false });
    expect((await s.call('GET', '/schema/objects/lead')).status).toBe(404);
  });

  it('a key without schema:read may not even plan', async () => {
    const key = await s.keyFor('member', ['records:read']);
    expectError(await push(key, true), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN_MESSAGE, errors: false });
  });

  it('a member key with schema:write scope still may not push (the role lacks schema write)', async () => {
    const key = await s.keyFor('member', ['schema:read', 'schema:write']);
    expect((await push(key, true)).status).toBe(200);
    expectError(await push(key, false), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN_MESSAGE, errors: false });
  });

  it('an admin key with schema:read,schema:write pushes', async () => {
    const key = await s.keyFor('admin', ['schema:read', 'schema:write']);
    const r = await push(key, false);
    expect(r.status).toBe(200);
    expect(r.body.data.applied).toBe(true);
  });
});

describe('DELETE /keys/:id (contract.md §3)', () => {
  it('an unknown id is 404 SCHEMA_KEY_NOT_FOUND', async () => {
    expectError(await s.call('DELETE', '/keys/0123456789abcdef'), { status: 404, code: 'SCHEMA_KEY_NOT_FOUND' });
  });
});
