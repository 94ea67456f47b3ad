import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';
import { startTestServer, type TestServer } from './helpers.js';

// `schemasync keys` as a user runs it (the built bin, through the SDK) against a real server.
const cwd = mkdtempSync(join(tmpdir(), 'schemasync-keys-cli-'));
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
  rmSync(cwd, { recursive: true, force: true });
});

const cli = (args: string[], key = s.ownerKey) => runCli(s.base, key, args, cwd);

describe('schemasync keys', () => {
  it('creates a key, shows its secret once, lists without secrets, revokes it', async () => {
    const created = await cli(['keys', 'create', 'ci', '--role', 'viewer', '--scopes', 'records:read,schema:read', '--json']);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout) as { id: string; secret: string; role: string; scopes: string[] };
    expect(key).toMatchObject({ role: 'viewer', scopes: ['records:read', 'schema:read'] });
    // The new key works against the server.
    expect((await s.call('GET', '/schema/objects', { key: key.secret })).status).toBe(200);

    const list = await cli(['keys', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/ID\s+NAME\s+ROLE/);
    expect(list.stdout).toContain(key.id);
    expect(list.stdout).not.toContain(key.secret);

    const revoked = await cli(['keys', 'revoke', key.id]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`revoked key ${key.id}`);
    expect((await s.call('GET', '/schema/objects', { key: key.secret })).status).toBe(401);
  });

  it('create shows the scopes the server stored: a scoped key without --scopes passes on its own', async () => {
    const manager = await s.keyFor('admin', ['keys:manage', 'records:read']);
    const human = await cli(['keys', 'create', 'inherits', '--role', 'member'], manager);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^created key [0-9a-f]{16} "inherits" \(role member, scopes keys:manage,records:read\)$/m);
    const json = await cli(['keys', 'create', 'inherits2', '--role', 'member', '--json'], manager);
    expect(JSON.parse(json.stdout)).toMatchObject({ role: 'member', scopes: ['keys:manage', 'records:read'] });
    const unlimited = await cli(['keys', 'create', 'wide', '--role', 'member']);
    expect(unlimited.stdout).toContain('"wide" (role member, scopes (role))');
    const refused = await cli(['keys', 'create', 'minted', '--role', 'admin', '--scopes', 'schema:write'], manager);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Error: 403 SCHEMA_FORBIDDEN: You do not have permission to perform this action.');
  });

  it('a refusal is one error line with status and code, exit 1', async () => {
    const owner = (await s.store.listKeys()).find((k) => k.role === 'owner' && !k.revokedAt)!;
    const r = await cli(['keys', 'revoke', owner.id]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: 400 SCHEMA_VALIDATION_FAILED: /);
    const viewer = await s.keyFor('viewer');
    const denied = await cli(['keys', 'list'], viewer);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('Error: 403 SCHEMA_FORBIDDEN: You do not have permission to perform this action.');
  });
});
