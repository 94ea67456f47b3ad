import { randomBytes, randomUUID } from 'node:crypto';
import { ServiceError } from '../../engine/errors.js';
import type { RecordOut } from '../../engine/model/stored.js';
import type { Actor, IdempotentAnswer, KeyOut, Scope, Store } from '../../engine/store/types.js';

/**
 * Keys only, in memory: lets the app-shell tests (envelope, ids, auth, rate limits,
 * openapi) run without the SQLite store. Every other Store method throws a plain Error,
 * which the shell must mask as a 500.
 */
export function fakeStore(options: { records?: boolean } = {}): Store {
  const keys = new Map<string, KeyOut & { secret: string }>();
  const impl: Partial<Store> = {
    ...(options.records ? fakeRecords() : {}),
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
  return new Proxy(impl as Store, {
    get(target, prop, receiver) {
      if (prop in target) return Reflect.get(target, prop, receiver);
      return () => {
        throw new Error(`fake store: ${String(prop)} is not implemented (secret detail that must not leak)`);
      };
    },
  });
}

/**
 * Records of one object `note` in memory, with versions and idempotency answers: enough to
 * test what the record routes add (status codes, etag / if-match, idempotency keys)
 * independently of the SQLite store.
 */
function fakeRecords(): Partial<Store> {
  const records = new Map<string, RecordOut>();
  const answers = new Map<string, { hash: string; answer: IdempotentAnswer }>();
  const writes = { count: 0 };
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
    facts: (() => writes) as never,
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
    atomically: (fn) => fn(),
  };
}
