import { intColumn } from './rows.js';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../../errors.js';
import { requireStoredValues } from '../../model/stored-values.js';
import type { Statement } from 'better-sqlite3';
import { now, writeTransaction, type Db } from './database.js';
import { BUILTIN_ROLES, isBuiltinRole } from '../../model/roles.js';
import { SCOPES, type Actor, type KeyOut, type Scope } from '../types.js';

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
 * custom role"). Exported so the keys route can answer an unknown role with this 404 before
 * it weighs whether the caller may grant that role (a 403 would hide the typo).
 */
export function requireKeyRole(role: string, customExists: (name: string) => boolean): void {
  if (!isBuiltinRole(role) && !customExists(role)) {
    throw new ServiceError('SCHEMA_ROLE_NOT_FOUND', `Role "${role}" does not exist (built-in roles: ${BUILTIN_ROLES.join(', ')}; custom roles: schemasync roles list)`);
  }
}

/**
 * Called inside the transaction that changes what a key is (a revoke, a role rename that
 * moves keys): any process that reads the new version also reads the changed rows, so a
 * cache it drops on seeing the change cannot re-admit the key as it was.
 */
export function bumpKeysVersion(db: Db): void {
  db.prepare("INSERT INTO _ss_meta (key, value) VALUES ('keys_version', '1') ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)").run();
}

export class Keys {
  /** Read on every request: prepared once. */
  private versionQuery: Statement | undefined;
  constructor(private readonly db: Db, private readonly customRoleExists: (name: string) => boolean) {}

  create(input: { name: string; role: string; scopes?: Scope[] | null }): { key: KeyOut; secret: string } {
    requireKeyRole(input.role, this.customRoleExists);
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
    this.db
      .prepare('INSERT INTO _ss_keys (id, name, role, scopes, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, input.name, input.role, scopes === null ? null : JSON.stringify(scopes), sha256(secret).toString('hex'), now());
    return { key: this.get(id)!, secret };
  }

  get(id: string): KeyOut | undefined {
    const row = this.db.prepare('SELECT * FROM _ss_keys WHERE id = ?').get(id) as KeyRow | undefined;
    return row ? toKey(row) : undefined;
  }

  list(): KeyOut[] {
    return (this.db.prepare('SELECT * FROM _ss_keys ORDER BY created_at, id').all() as KeyRow[]).map(toKey);
  }

  /**
   * Invariant (last owner key): the check of the other owner keys and the revocation are one
   * write transaction, so two revocations sent at once cannot each see the other's key still
   * active. Here BEGIN IMMEDIATE serialises them (one writer per file); a backend with
   * concurrent writers must read the owner keys under a lock or SERIALIZABLE (port.ts).
   */
  revoke(id: string): void {
    writeTransaction(this.db, () => {
      const key = this.get(id);
      if (!key) throw new ServiceError('SCHEMA_KEY_NOT_FOUND', `API key ${id} does not exist`);
      if (key.revokedAt !== null) return;
      if (key.role === 'owner') {
        // The last-owner rule (issue 3 "Auth") keeps an owner able to do everything: a scoped
        // owner does not count as the remaining owner, even with keys:manage, since it can
        // only mint keys within its own scopes (permissions.ts withinRights) and so could
        // never get data access back. Revoking a scoped owner is fine while a full one stays.
        const others = (this.db.prepare("SELECT scopes FROM _ss_keys WHERE role = 'owner' AND revoked_at IS NULL AND id <> ?").all(id) as { scopes: string | null }[])
          .map((r) => (r.scopes === null ? null : (JSON.parse(r.scopes) as Scope[])));
        if (!others.some(fullRights) && (fullRights(key.scopes) || others.length === 0)) {
          throw new ServiceError('SCHEMA_VALIDATION_FAILED', 'The last active owner key without a scope limit cannot be revoked', {
            fix: 'create another owner key with no scope limit first (POST /keys { role: "owner" })',
          });
        }
      }
      this.db.prepare('UPDATE _ss_keys SET revoked_at = ? WHERE id = ?').run(now(), id);
      bumpKeysVersion(this.db);
    });
  }

  /**
   * A counter bumped by every revocation (and role rename), shared by every process on the database: the
   * server reads it on each request (one indexed row) and forgets remembered
   * authentications when it moved, so a revoke through one process is honoured by all the
   * others from their next request on (issue 21).
   */
  version(): number {
    this.versionQuery ??= this.db.prepare("SELECT value FROM _ss_meta WHERE key = 'keys_version'");
    const row = this.versionQuery.get() as { value: string } | undefined;
    return row ? Number(row.value) : 0;
  }

  authenticate(secret: string): Actor | null {
    const m = SECRET.exec(secret);
    if (!m) return null;
    const row = this.db.prepare('SELECT * FROM _ss_keys WHERE id = ?').get(m[1]) as KeyRow | undefined;
    if (!row || row.revoked_at !== null) return null;
    const stored = Buffer.from(row.hash, 'hex');
    const given = sha256(secret);
    if (stored.length !== given.length || !timingSafeEqual(stored, given)) return null;
    const t = Date.now();
    if (row.last_used_at === null || t - Date.parse(row.last_used_at) > LAST_USED_GRANULARITY_MS) {
      this.db.prepare('UPDATE _ss_keys SET last_used_at = ? WHERE id = ?').run(new Date(t).toISOString(), row.id);
    }
    return { keyId: row.id, role: row.role, scopes: row.scopes === null ? null : (JSON.parse(row.scopes) as Scope[]) };
  }

  countActive(): number {
    return intColumn(this.db.prepare('SELECT COUNT(*) AS n FROM _ss_keys WHERE revoked_at IS NULL').get(), 'n');
  }
}
