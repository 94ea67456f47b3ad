import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codeOf } from '../support/service-error.js';
import { openStore } from '../../engine/store/index.js';
import { SCOPES, type Store } from '../../engine/store/types.js';

/** API keys and idempotency answers (issue 3 "Auth", contract.md §3). */
let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ss-keys-'));
  store = openStore({ path: join(dir, 'schemasync.db') });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('store keys', () => {
  it('stores only the sha256 of the secret and authenticates by it', async () => {
    const { key, secret } = await store.createKey({ name: 'ci', role: 'member', scopes: ['records:read'] });
    expect(secret).toMatch(/^ssk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(secret).toContain(key.id);
    await store.close();
    const db = new Database(join(dir, 'schemasync.db'), { readonly: true });
    const row = db.prepare('SELECT * FROM _ss_keys WHERE id = ?').get(key.id) as { hash: string };
    db.close();
    expect(row.hash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(readFileSync(join(dir, 'schemasync.db')).includes(Buffer.from(secret))).toBe(false);
    store = openStore({ path: join(dir, 'schemasync.db') });
    expect(await store.authenticate(secret)).toEqual({ keyId: key.id, role: 'member', scopes: ['records:read'] });
    expect((await store.listKeys())[0]?.lastUsedAt).not.toBeNull();
  });

  it('rejects unknown, malformed, tampered and revoked secrets', async () => {
    const { key, secret } = await store.createKey({ name: 'a', role: 'admin' });
    expect(await store.authenticate('nope')).toBeNull();
    expect(await store.authenticate(`${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
    expect(await store.authenticate(secret.replace(key.id, '0000000000000000'))).toBeNull();
    await store.revokeKey(key.id);
    expect(await store.authenticate(secret)).toBeNull();
    expect((await store.listKeys())[0]?.revokedAt).not.toBeNull();
  });

  it('the last active owner key cannot be revoked; unknown roles and scopes are refused', async () => {
    const a = await store.createKey({ name: 'o1', role: 'owner' });
    const b = await store.createKey({ name: 'o2', role: 'owner' });
    await store.revokeKey(a.key.id);
    expect(await codeOf(() => store.revokeKey(b.key.id))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(await store.countActiveKeys()).toBe(1);
    // An owner key listing every scope has no limit either: it counts as the remaining owner.
    const every = await store.createKey({ name: 'o3', role: 'owner', scopes: [...SCOPES] });
    await store.revokeKey(b.key.id);
    expect(await codeOf(() => store.revokeKey(every.key.id))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(await codeOf(() => store.createKey({ name: 'x', role: 'wizard' }))).toBe('SCHEMA_ROLE_NOT_FOUND');
    expect(await codeOf(() => store.createKey({ name: 'x', role: 'member', scopes: ['fly' as never] }))).toBe('SCHEMA_VALIDATION_FAILED');
  });
});

describe('store idempotency', () => {
  it('replays the answer for the same body and refuses another body under the key', async () => {
    expect(await store.recallIdempotent('k1', 'abc', 'h1')).toBeUndefined();
    // The answer is kept as the JSON text that was sent (a replay sends it as is).
    await store.rememberIdempotent('k1', 'abc', 'h1', { status: 201, body: '{"id":"x"}' });
    expect(await store.recallIdempotent('k1', 'abc', 'h1')).toEqual({ status: 201, body: '{"id":"x"}' });
    expect(await codeOf(() => store.recallIdempotent('k1', 'abc', 'h2'))).toBe('SCHEMA_CONFLICT');
    // Keys are per caller.
    expect(await store.recallIdempotent('k2', 'abc', 'h2')).toBeUndefined();
  });

  it('forgets answers after 24 hours', async () => {
    await store.rememberIdempotent('k1', 'old', 'h1', { status: 201, body: '{}' });
    await store.close();
    const db = new Database(join(dir, 'schemasync.db'));
    db.prepare('UPDATE _ss_idempotency SET expires_at = ?').run(Date.now() - 1);
    db.close();
    store = openStore({ path: join(dir, 'schemasync.db') });
    expect(await store.recallIdempotent('k1', 'old', 'h2')).toBeUndefined();
  });
});
