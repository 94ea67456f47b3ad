import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.js';
import { grantsOf, isBuiltinRole } from '../model/roles.js';
import type { Actor, Store } from '../store/types.js';

/**
 * Who is calling (contract.md §3 "Authentication"): `Authorization: Bearer <key>` or
 * `x-api-key: <key>`. No key at all → 403 SCHEMA_ACTOR_CONTEXT_REQUIRED (Authentication
 * rule 2); a presented key that is malformed, unknown or revoked → 401 AUTH_INVALID_API_KEY.
 */
export function presentedKey(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization;
  if (typeof auth === 'string' && auth.trim() !== '') {
    const m = /^Bearer\s+(.*)$/i.exec(auth.trim());
    // An Authorization header in another scheme is a presented-but-malformed credential.
    return m ? (m[1] ?? '').trim() : '\u0000malformed';
  }
  const header = request.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (typeof key === 'string' && key.trim() !== '') return key.trim();
  return undefined;
}

/** Keys are short opaque tokens; anything else is refused before touching the store. */
const KEY_SHAPE = /^[A-Za-z0-9_\-.]{8,200}$/;

/**
 * Successful authentications, remembered briefly: looking a key up costs a query and a
 * hash per request, the largest fixed cost of a small write (test/bench/server.bench.mjs).
 * Revocation is seen by every process sharing the database: each request first asks the
 * store's keys version (one row, bumped in the revoke's transaction) and a cache that saw
 * another version forgets everything. On SQLite the version is read for every request, so
 * a revoke is honoured by the very next one (issue 21); on PostgreSQL the store reuses a
 * read for up to Backend.keysVersionMaxAgeMs (500 ms), so a revoke through another process
 * is honoured within that (issue 15: within a second), one through this process at once
 * (the store reads again after its own key writes). A request already past the check when
 * the revoke commits may still finish, as it would have without the cache. Only keys that passed are kept, and the map
 * is bounded, so random keys cannot grow it; TTL_MS still bounds how long a key changed
 * any other way (a role edited in the database) is remembered.
 */
export class AuthCache {
  static readonly TTL_MS = 5_000;
  static readonly MAX = 1_000;
  private readonly entries = new Map<string, { actor: Actor; at: number }>();
  private keysVersion: number | undefined;
  constructor(private readonly now: () => number = Date.now) {}

  /** Forget everything when the keys changed since the last look. */
  sync(keysVersion: number): void {
    if (keysVersion !== this.keysVersion) {
      this.entries.clear();
      this.keysVersion = keysVersion;
    }
  }

  get(secret: string): Actor | undefined {
    const e = this.entries.get(secret);
    if (!e) return undefined;
    if (this.now() - e.at > AuthCache.TTL_MS) {
      this.entries.delete(secret);
      return undefined;
    }
    return e.actor;
  }

  set(secret: string, actor: Actor): void {
    if (this.entries.size >= AuthCache.MAX) this.entries.clear();
    this.entries.set(secret, { actor, at: this.now() });
  }

  clear(): void {
    this.entries.clear();
  }
}

export async function authenticate(request: FastifyRequest, store: Store, cache?: AuthCache): Promise<Actor> {
  const key = presentedKey(request);
  if (key === undefined) {
    throw new ServiceError('SCHEMA_ACTOR_CONTEXT_REQUIRED', 'An API key is required: send Authorization: Bearer <key>', {
      fix: 'Pass --api-key, set SCHEMASYNC_API_KEY, or use the key in <data>/credentials.json.',
    });
  }
  if (cache) cache.sync(await store.keysVersion());
  const cached = cache?.get(key);
  if (cached) return cached;
  const actor = KEY_SHAPE.test(key) ? await store.authenticate(key) : null;
  if (actor) cache?.set(key, actor);
  if (!actor) throw new ServiceError('AUTH_INVALID_API_KEY', 'The API key is invalid or has been revoked');
  return actor;
}

/**
 * A custom role's grants, read from the store on every request rather than cached with the
 * key: a role changed or deleted (by a push or PUT /roles, through any process sharing the
 * database) governs the very next request. A role that no longer exists grants nothing.
 */
export async function withGrants(actor: Actor, store: Store): Promise<Actor> {
  if (isBuiltinRole(actor.role)) return actor;
  const role = await store.findRole(actor.role);
  return { ...actor, grants: role ? grantsOf(role) : { schema: 'none', permissions: [] } };
}
