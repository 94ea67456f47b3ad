import { randomBytes, randomUUID } from 'node:crypto';
import { ServiceError } from '../../engine/errors.js';
import type { Actor, KeyOut, Scope, Store } from '../../engine/store/types.js';

/**
 * Keys only, in memory. Its one remaining user is test/api/files.test.ts, which wires the
 * files engine onto it; every other API test runs on the real store (issue 14). Every
 * other Store method throws a plain Error, which the shell must mask as a 500.
 */
/** A Store written synchronously; `asyncStore` answers each call with a promise. */
export type SyncStore = {
  [K in keyof Store]: Store[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : Store[K];
};

/**
 * A Store from synchronous parts: each call answers with a promise (a throw becomes a
 * rejection, as from the real store); anything `impl` lacks answers `missing(prop)`.
 */
export function asyncStore(impl: Partial<SyncStore>, missing: (prop: string) => unknown): Store {
  const store: Store = new Proxy(impl as unknown as Store, {
    get(target, prop, receiver) {
      // In memory and single-threaded: a transaction's body runs as is, on this same store.
      if (prop === 'transaction' && !(prop in target)) return (fn: (tx: Store) => Promise<unknown>) => fn(store);
      // A store opened without a data folder has no files API (the file routes answer 503).
      if (prop === 'files' && !(prop in target)) return undefined;
      // Nor a shared rate counter (the server counts in memory).
      if (prop === 'rateCounter' && !(prop in target)) return undefined;
      // A store is no promise: `await openStore(…)` must give the store itself.
      if (prop === 'then') return undefined;
      if (!(prop in target)) return missing(String(prop));
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          return Promise.resolve((value as (...a: unknown[]) => unknown)(...args));
        } catch (err) {
          return Promise.reject(err);
        }
      };
    },
  });
  return store;
}

export function fakeStore(): Store {
  const keys = new Map<string, KeyOut & { secret: string }>();
  const impl: Partial<SyncStore> = {
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
    keysVersion: () => [...keys.values()].filter((k) => k.revokedAt).length,
  };
  const store = asyncStore(impl, (prop) => async () => {
    throw new Error(`fake store: ${prop} is not implemented (secret detail that must not leak)`);
  });
  return store;
}
