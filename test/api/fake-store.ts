import { randomBytes, randomUUID } from 'node:crypto';
import { ServiceError } from '../../engine/errors.js';
import type { Actor, KeyOut, Scope, Store } from '../../engine/store/types.js';

/**
 * Keys only, in memory: lets the app-shell tests (envelope, ids, auth, rate limits,
 * openapi) run without the SQLite store. Every other Store method throws a plain Error,
 * which the shell must mask as a 500.
 */
export function fakeStore(): Store {
  const keys = new Map<string, KeyOut & { secret: string }>();
  const impl: Partial<Store> = {
    path: ':memory:',
    close() {},
    listObjects: () => [],
    findObject: () => undefined,
    requireObject(name: string): never {
      throw new ServiceError('SCHEMA_OBJECT_NOT_FOUND', `No object "${name}"`);
    },
    findSource: () => undefined,
    listViews: () => [],
    findView: () => undefined,
    createKey(input: { name: string; role: string; scopes?: Scope[] | null }) {
      const id = randomUUID();
      const secret = `ssk_${id}_${randomBytes(24).toString('base64url')}`;
      const key: KeyOut = { id, name: input.name, role: input.role, scopes: input.scopes ?? null, createdAt: new Date().toISOString(), revokedAt: null, lastUsedAt: null };
      keys.set(id, { ...key, secret });
      return { key, secret };
    },
    listKeys: () => [...keys.values()].map(({ secret: _s, ...k }) => k),
    revokeKey(id: string) {
      const k = keys.get(id);
      if (!k) throw new ServiceError('SCHEMA_VALIDATION_FAILED', 'No such key');
      k.revokedAt = new Date().toISOString();
    },
    authenticate(secret: string): Actor | null {
      for (const k of keys.values()) if (k.secret === secret && !k.revokedAt) return { keyId: k.id, role: k.role, scopes: k.scopes };
      return null;
    },
    countActiveKeys: () => [...keys.values()].filter((k) => !k.revokedAt).length,
  };
  return new Proxy(impl as Store, {
    get(target, prop, receiver) {
      if (prop in target) return Reflect.get(target, prop, receiver);
      return () => {
        throw new Error(`fake store: ${String(prop)} is not implemented (secret detail that must not leak)`);
      };
    },
  });
}
