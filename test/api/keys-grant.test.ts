import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORBIDDEN_MESSAGE } from '../../engine/errors.js';
import { expectError, startTestServer, type Reply, type TestServer } from './helpers.js';

// A key may create and revoke only keys within its own rights (contract.md §3: "A key may do
// what both its role and its scopes allow") — over real HTTP on a real SQLite file.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s.close());

const idOf = (secret: string): string => secret.split('_')[1]!;
const refused = (r: Reply): void => expectError(r, { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN_MESSAGE, errors: false });
const storedScopes = async (id: string): Promise<unknown> =>
  ((await s.call('GET', '/keys')).body.data as { id: string; scopes: unknown }[]).find((k) => k.id === id)?.scopes;
const keyCount = async (): Promise<number> => ((await s.call('GET', '/keys')).body.data as unknown[]).length;

describe('creating keys', () => {
  it('an admin limited to keys:manage cannot mint an unlimited admin key (the audit case)', async () => {
    const manager = await s.keyFor('admin', ['keys:manage']);
    refused(await s.call('POST', '/schema/objects', { key: manager, body: { name: 'audit_a' } }));
    const before = await keyCount();
    // Asking for no limit, or for a scope the creator lacks, is refused — and names nothing.
    refused(await s.call('POST', '/keys', { key: manager, body: { name: 'minted', role: 'admin', scopes: ['schema:write'] } }));
    const wide = await s.call('POST', '/keys', { key: manager, body: { name: 'minted', role: 'admin', scopes: ['keys:manage', 'schema:write'] } });
    refused(wide);
    expect(wide.text).not.toContain('schema:write');
    expect(await keyCount()).toBe(before);
    // Asking for none: the new key inherits the creator's limits, so it cannot write schema either.
    const minted = await s.call('POST', '/keys', { key: manager, body: { name: 'minted', role: 'admin' } });
    expect(minted.status).toBe(201);
    expect(minted.body.data.scopes).toEqual(['keys:manage']);
    refused(await s.call('POST', '/schema/objects', { key: minted.body.data.secret, body: { name: 'audit_a' } }));
  });

  it('an owner limited to keys:manage cannot mint an owner key able to delete an object', async () => {
    expect((await s.call('POST', '/schema/objects', { body: { name: 'audit_b' } })).status).toBe(201);
    const manager = await s.keyFor('owner', ['keys:manage']);
    refused(await s.call('POST', '/keys', { key: manager, body: { name: 'minted', role: 'owner', scopes: ['schema:write', 'keys:manage'] } }));
    // Explicit null ("no limit of its own") is treated like absent: the creator's scopes.
    const minted = await s.call('POST', '/keys', { key: manager, body: { name: 'minted', role: 'owner', scopes: null } });
    expect(minted.status).toBe(201);
    expect(minted.body.data.scopes).toEqual(['keys:manage']);
    expect(await storedScopes(minted.body.data.id)).toEqual(['keys:manage']);
    refused(await s.call('DELETE', '/schema/objects/audit_b', { key: minted.body.data.secret }));
    expect((await s.call('GET', '/schema/objects/audit_b')).status).toBe(200);
  });

  it('a scoped key creating a key without scopes gives it its own scopes, read back with GET /keys', async () => {
    const manager = await s.keyFor('admin', ['keys:manage', 'records:read', 'schema:read']);
    const r = await s.call('POST', '/keys', { key: manager, body: { name: 'inherits', role: 'member' } });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ role: 'member', scopes: ['keys:manage', 'records:read', 'schema:read'] });
    expect(await storedScopes(r.body.data.id)).toEqual(['keys:manage', 'records:read', 'schema:read']);
  });

  it('a scoped key may grant a subset of its scopes, at its role or below', async () => {
    const manager = await s.keyFor('owner', ['keys:manage', 'schema:read', 'schema:write']);
    const sub = await s.call('POST', '/keys', { key: manager, body: { name: 'reader', role: 'viewer', scopes: ['schema:read'] } });
    expect(sub.status).toBe(201);
    expect(sub.body.data.scopes).toEqual(['schema:read']);
    expect((await s.call('GET', '/schema/objects', { key: sub.body.data.secret })).status).toBe(200);
    const same = await s.call('POST', '/keys', { key: manager, body: { name: 'peer', role: 'owner', scopes: ['schema:write', 'keys:manage', 'schema:read'] } });
    expect(same.status).toBe(201);
  });

  it('an unlimited owner still creates any key; an admin still no owner key', async () => {
    for (const body of [
      { name: 'o', role: 'owner' },
      { name: 'o2', role: 'owner', scopes: null },
      { name: 'a', role: 'admin', scopes: ['schema:write'] },
      { name: 'v', role: 'viewer' },
    ]) {
      const r = await s.call('POST', '/keys', { body });
      expect(r.status).toBe(201);
      expect(r.body.data.scopes).toEqual(body.scopes ?? null);
    }
    refused(await s.call('POST', '/keys', { key: await s.keyFor('admin'), body: { name: 'x', role: 'owner', scopes: ['records:read'] } }));
  });

  it('an unknown role stays a 404 and an unknown scope a 400, whoever asks', async () => {
    const manager = await s.keyFor('admin', ['keys:manage']);
    expectError(await s.call('POST', '/keys', { key: manager, body: { name: 'x', role: 'wizard' } }), { status: 404, code: 'SCHEMA_ROLE_NOT_FOUND' });
    expectError(await s.call('POST', '/keys', { key: manager, body: { name: 'x', role: 'member', scopes: ['fly'] } }), {
      status: 400,
      code: undefined,
      message: 'Validation failed',
      errors: true,
    });
  });
});

describe('revoking keys', () => {
  it('a scoped key cannot revoke a broader key, only one within its own rights (itself included)', async () => {
    const manager = await s.keyFor('owner', ['keys:manage', 'records:read']);
    const unlimitedMember = await s.keyFor('member');
    const widerMember = await s.keyFor('member', ['records:read', 'records:write']);
    const narrow = await s.keyFor('member', ['records:read']);
    refused(await s.call('DELETE', `/keys/${idOf(s.ownerKey)}`, { key: manager }));
    refused(await s.call('DELETE', `/keys/${idOf(unlimitedMember)}`, { key: manager }));
    refused(await s.call('DELETE', `/keys/${idOf(widerMember)}`, { key: manager }));
    expect((await s.call('GET', '/schema/objects', { key: unlimitedMember })).status).toBe(200);
    expect((await s.call('DELETE', `/keys/${idOf(narrow)}`, { key: manager })).status).toBe(200);
    expect((await s.call('DELETE', `/keys/${idOf(manager)}`, { key: manager })).status).toBe(200);
    // The unlimited owner revokes anything.
    expect((await s.call('DELETE', `/keys/${idOf(unlimitedMember)}`)).status).toBe(200);
  });

  it('an unlimited admin revokes unlimited admin and member keys but no owner key', async () => {
    const admin = await s.keyFor('admin');
    expect((await s.call('DELETE', `/keys/${idOf(await s.keyFor('admin'))}`, { key: admin })).status).toBe(200);
    expect((await s.call('DELETE', `/keys/${idOf(await s.keyFor('member'))}`, { key: admin })).status).toBe(200);
    refused(await s.call('DELETE', `/keys/${idOf(await s.keyFor('owner', ['records:read']))}`, { key: admin }));
  });
});
