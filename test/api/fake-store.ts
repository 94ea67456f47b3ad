import { randomBytes, randomUUID } from 'node:crypto';
import { ServiceError } from '../../engine/errors.js';
import type { RecordOut } from '../../engine/model/stored.js';
import type { Actor, IdempotentAnswer, KeyOut, Scope, Store } from '../../engine/store/types.js';

/**
 * Keys only, in memory: lets the app-shell tests (envelope, ids, auth, rate limits,
 * openapi) run without the SQLite store. Every other Store method throws a plain Error,
 * which the shell must mask as a 500.
 */
/** A Store written synchronously; `asyncStore` answers each call with a promise. */
export type SyncStore = {
  [K in keyof Store]: Store[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : Store[K];
};

/** How many records the fake has written (routes.test checks a replay writes nothing). */
export const fakeWrites = new WeakMap<Store, { count: number }>();

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

export function fakeStore(options: { records?: boolean } = {}): Store {
  const keys = new Map<string, KeyOut & { secret: string }>();
  const writes = { count: 0 };
  const impl: Partial<SyncStore> = {
    ...(options.records ? fakeRecords(writes) : {}),
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
  fakeWrites.set(store, writes);
  return store;
}

/**
 * Records of one object `note` in memory, with versions and idempotency answers: enough to
 * test what the record routes add (status codes, etag / if-match, idempotency keys)
 * independently of the SQLite store.
 */
function fakeRecords(writes: { count: number }): Partial<SyncStore> {
  const records = new Map<string, RecordOut>();
  const answers = new Map<string, { hash: string; answer: IdempotentAnswer }>();
  const check = (object: string) => {
    if (object !== 'note') throw new ServiceError('SCHEMA_OBJECT_NOT_FOUND', `No object "${object}"`);
  };
  const get = (object: string, id: string): RecordOut => {
    check(object);
    const r = records.get(id);
    if (!r) throw new ServiceError('SCHEMA_RECORD_NOT_FOUND', 'No record with that id');
    return r;
  };
  const make = (values: Record<string, unknown>): RecordOut => {
    writes.count++;
    const now = new Date().toISOString();
    const r = { id: randomUUID(), object: 'note', version: 1, createdAt: now, updatedAt: now, values: { ...values } };
    records.set(r.id, r);
    return r;
  };
  return {
    createRecord(object, values) {
      check(object);
      return make(values);
    },
    getRecord: get,
    updateRecord(object, id, patch, ifMatch) {
      const r = get(object, id);
      if (ifMatch !== '*' && ifMatch !== r.version) throw new ServiceError('SCHEMA_CONFLICT', 'The record has changed since that version');
      const next = { ...r, version: r.version + 1, values: { ...r.values, ...patch } };
      records.set(id, next);
      return next;
    },
    deleteRecord(object, id) {
      get(object, id);
      records.delete(id);
      return { id };
    },
    bulkCreate(object, list) {
      check(object);
      return list.map(make);
    },
    bulkDelete(object, ids) {
      check(object);
      let deleted = 0;
      for (const id of ids) if (records.delete(id)) deleted++;
      return { deleted };
    },
    search(object, input) {
      check(object);
      const all = [...records.values()];
      return { records: all.slice(0, input.limit ?? 50), nextCursor: null, total: all.length };
    },
    recallIdempotent(scope, key, hash) {
      const prior = answers.get(`${scope}|${key}`);
      if (!prior) return undefined;
      if (prior.hash !== hash) throw new ServiceError('SCHEMA_CONFLICT', 'That idempotency key was used with another body');
      return prior.answer;
    },
    rememberIdempotent(scope, key, hash, answer) {
      answers.set(`${scope}|${key}`, { hash, answer });
    },

  };
}
