import { intColumn } from './rows.js';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../../errors.js';
import { requireStoredValues } from '../../model/stored-values.js';
import type { Executor } from '../port.js';
import { now } from './time.js';
import { BUILTIN_ROLES, isBuiltinRole } from '../../model/roles.js';
import { SCOPES, type Actor, type KeyGuard, type KeyOut, type Scope } from '../types.js';

/**
 * API keys (issue 3 "Auth"): the secret is `ssk_<keyId>_<32 random bytes base64url>`, shown
 * once; only its sha256 is stored. authenticate finds the row by the keyId inside the
 * secret and compares hashes in constant time.
 */
interface KeyRow {
  id: string;
  name: string;
  role: string;
  scopes: string | null;
  hash: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

const SECRET = /^ssk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
/** lastUsedAt is written at most once a minute per key, so authenticating stays a read. */
const LAST_USED_GRANULARITY_MS = 60_000;

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

const toKey = (r: KeyRow): KeyOut => ({
  id: r.id,
  name: r.name,
  role: r.role,
  scopes: r.scopes === null ? null : (JSON.parse(r.scopes) as Scope[]),
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
});

/** Scopes null = everything the role allows; a list naming every scope is the same. */
const fullRights = (scopes: readonly Scope[] | null): boolean => scopes === null || SCOPES.every((s) => scopes.includes(s));

/**
 * A key holds a built-in role or a custom one that exists (contract.md §3: "Keys may name a
 * custom role"). Checked before the caller's rights are weighed (Keys.create's `authorize`),
 * so an unknown role is this 404, not a 403 that would hide the typo.
 */
function requireKeyRole(role: string, customExists: (name: string) => boolean): void {
  if (!isBuiltinRole(role) && !customExists(role)) {
    throw new ServiceError('SCHEMA_ROLE_NOT_FOUND', `Role "${role}" does not exist (built-in roles: ${BUILTIN_ROLES.join(', ')}; custom roles: schemasync roles list)`);
  }
}

/**
 * Called inside the transaction that changes what a key is (a revoke, a role rename that
 * moves keys): any process that reads the new version also reads the changed rows, so a
 * cache it drops on seeing the change cannot re-admit the key as it was.
 */
export async function bumpKeysVersion(tx: Executor): Promise<void> {
  await tx.run("INSERT INTO _ss_meta (key, value) VALUES ('keys_version', '1') ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(_ss_meta.value AS INTEGER) + 1 AS TEXT)");
}

/** `_ss_keys`: every function runs on the caller's executor (a write: its transaction). */
export const Keys = {
  /** `customRoleExists`: the role was read in the same transaction (roles.ts findRole). */
  async create(tx: Executor, input: { name: string; role: string; scopes?: Scope[] | null }, customRoleExists: boolean, authorize?: KeyGuard): Promise<{ key: KeyOut; secret: string }> {
    requireKeyRole(input.role, () => customRoleExists);
    authorize?.({ role: input.role, scopes: input.scopes ?? null });
    requireStoredValues({ name: input.name });
    const scopes = input.scopes ?? null;
    const bad = (scopes ?? []).filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (bad.length > 0) {
      throw new ServiceError('SCHEMA_VALIDATION_FAILED', `Unknown scope ${bad.join(', ')}`, {
        errors: bad.map((s) => ({ path: ['scopes', (scopes ?? []).indexOf(s)], message: `unknown scope "${s}" (use ${SCOPES.join(', ')})` })),
      });
    }
    const id = randomBytes(8).toString('hex');
    const secret = `ssk_${id}_${randomBytes(32).toString('base64url')}`;
    await tx.run('INSERT INTO _ss_keys (id, name, role, scopes, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
      id, input.name, input.role, scopes === null ? null : JSON.stringify(scopes), sha256(secret).toString('hex'), now(),
    ]);
    return { key: (await Keys.get(tx, id))!, secret };
  },

  async get(ex: Executor, id: string): Promise<KeyOut | undefined> {
    const row = await ex.get<KeyRow>('SELECT * FROM _ss_keys WHERE id = ?', [id]);
    return row ? toKey(row) : undefined;
  },

  async list(ex: Executor): Promise<KeyOut[]> {
    return (await ex.all<KeyRow>('SELECT * FROM _ss_keys ORDER BY created_at, id')).map(toKey);
  },

  /**
   * Invariant (last owner key): the check of the other owner keys and the revocation are one
   * write transaction, so two revocations sent at once cannot each see the other's key still
   * active. Here BEGIN IMMEDIATE serialises them (one writer per file); a backend with
   * concurrent writers must read the owner keys under a lock or SERIALIZABLE (port.ts).
   */
  async revoke(tx: Executor, id: string, authorize?: KeyGuard): Promise<void> {
    const key = await Keys.get(tx, id);
    if (!key) throw new ServiceError('SCHEMA_KEY_NOT_FOUND', `API key ${id} does not exist`);
    authorize?.(key);
    if (key.revokedAt !== null) return;
    if (key.role === 'owner') {
      // The last-owner rule (issue 3 "Auth") keeps an owner able to do everything: a scoped
      // owner does not count as the remaining owner, even with keys:manage, since it can
      // only mint keys within its own scopes (permissions.ts withinRights) and so could
      // never get data access back. Revoking a scoped owner is fine while a full one stays.
      const others = (await tx.all<{ scopes: string | null }>("SELECT scopes FROM _ss_keys WHERE role = 'owner' AND revoked_at IS NULL AND id <> ?", [id]))
        .map((r) => (r.scopes === null ? null : (JSON.parse(r.scopes) as Scope[])));
      if (!others.some(fullRights) && (fullRights(key.scopes) || others.length === 0)) {
        throw new ServiceError('SCHEMA_VALIDATION_FAILED', 'The last active owner key without a scope limit cannot be revoked', {
          fix: 'create another owner key with no scope limit first (POST /keys { role: "owner" })',
        });
      }
    }
    await tx.run('UPDATE _ss_keys SET revoked_at = ? WHERE id = ?', [now(), id]);
    await bumpKeysVersion(tx);
  },

  /**
   * A counter bumped by every revocation (and role rename), shared by every process on the database: the
   * server asks it on each request (one indexed row; the store may reuse a read for
   * Backend.keysVersionMaxAgeMs) and forgets remembered authentications when it moved, so a
   * revoke through one process is honoured by all the others from their next request on
   * (issue 21), or within that max age (issue 15, PostgreSQL).
   */
  async version(ex: Executor): Promise<number> {
    const row = await ex.get<{ value: string }>("SELECT value FROM _ss_meta WHERE key = 'keys_version'");
    return row ? Number(row.value) : 0;
  },

  /**
   * A read, except lastUsedAt (at most once a minute per key): run in a write transaction
   * only when that is due (`touch`), so authenticating stays a read on the hot path.
   */
  async authenticate(ex: Executor, secret: string): Promise<{ actor: Actor; touch: boolean } | null> {
    const m = SECRET.exec(secret);
    if (!m) return null;
    const row = await ex.get<KeyRow>('SELECT * FROM _ss_keys WHERE id = ?', [m[1]!]);
    if (!row || row.revoked_at !== null) return null;
    const stored = Buffer.from(row.hash, 'hex');
    const given = sha256(secret);
    if (stored.length !== given.length || !timingSafeEqual(stored, given)) return null;
    const touch = row.last_used_at === null || Date.now() - Date.parse(row.last_used_at) > LAST_USED_GRANULARITY_MS;
    return { actor: { keyId: row.id, role: row.role, scopes: row.scopes === null ? null : (JSON.parse(row.scopes) as Scope[]) }, touch };
  },

  async touch(tx: Executor, keyId: string): Promise<void> {
    await tx.run('UPDATE _ss_keys SET last_used_at = ? WHERE id = ?', [now(), keyId]);
  },

  async countActive(ex: Executor): Promise<number> {
    return intColumn(await ex.get('SELECT COUNT(*) AS n FROM _ss_keys WHERE revoked_at IS NULL'), 'n');
  },
};
