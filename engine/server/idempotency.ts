import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../store/types.js';
import { idempotencyScope } from '../model/idempotency-scope.js';
import { requireStoredValues } from '../model/stored-values.js';
import { actorOf } from './context.js';
import { ok } from './envelope.js';

/**
 * `idempotency-key` on POST record routes (contract.md §3): the same key and body within
 * 24 h replays the first answer without writing again; the same key with another body is
 * 409 SCHEMA_CONFLICT (the store's recallIdempotent throws it). Keys are scoped by the
 * calling key and the route, so two clients cannot collide. Recall, write and remember are
 * one write transaction: two repeats cannot both write, not even through two processes on
 * one data folder, and a write whose answer could not be remembered is undone (a retry
 * would otherwise write again).
 */
export async function withIdempotency(
  store: Store,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  work: (store: Store) => Promise<unknown>,
): Promise<unknown> {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (!key) {
    reply.code(status);
    return ok(await work(store));
  }
  // Node reads headers as latin1, so this holds for HTTP/1; the rule is checked anyway, as
  // for every string the store keeps and compares.
  requireStoredValues({ 'idempotency-key': key }, ['headers']);
  const scope = idempotencyScope(actorOf(request).keyId, request.method, request.routeOptions.url ?? '', request.params);
  const hash = createHash('sha256').update(canonicalJson(request.body)).digest('hex');
  const json = (text: string): string => {
    reply.type('application/json; charset=utf-8');
    return text;
  };
  // Invariant (recall → write → remember): the three run in one write transaction, which
  // no other write interleaves with (engine/store/port.ts Driver.transaction), so a repeat
  // sent meanwhile waits and then finds the answer; a write whose answer could not be
  // remembered is undone with it.
  // No savepoint per write (types.ts StoreTransactionOptions): a failure of `work` ends the
  // transaction here, it is never caught and gone on from.
  return store.transaction(async (tx) => {
    const prior = await tx.recallIdempotent(scope, key, hash);
    if (prior) {
      reply.code(prior.status).header('idempotent-replayed', 'true');
      return json(prior.body);
    }
    // Serialised once: the text remembered is the payload sent (a JSON string with a JSON
    // content type goes out as is, Fastify serialises only objects), and a replay sends the
    // same text, byte for byte the first answer (contract.md §3).
    const text = JSON.stringify(ok(await work(tx)));
    await tx.rememberIdempotent(scope, key, hash, { status, body: text });
    reply.code(status);
    return json(text);
  }, { savepoints: false });
}

/**
 * JSON with object keys sorted, so `{a,b}` and `{b,a}` are the same body. The text is the one a
 * replacer that rebuilt each object from its sorted entries gave (array-index keys first in
 * numeric order, as every JS object orders them, then the others in `sort()` order), so a key
 * remembered before still matches its body (test/unit/canonical-json.property.test.ts checks
 * the two agree on random bodies).
 *
 * Written by the native JSON.stringify with a property list (ECMA-262 JSON.stringify step 4.b):
 * it writes each object's keys in the list's order, skipping those it lacks, so the list of every
 * key in the body in canonical order gives every object its own canonical order. This replaced a
 * sorted copy of the body (one new object and one sort per record: ~2× the CPU on a bulk body).
 * The list form reads listed keys an object lacks through its prototype, where a plain object
 * has only functions (skipped, as JSON skips them) and the `__proto__` accessor, which would
 * write the prototype: a body with a `__proto__` key (refused by the body parser, json-body.ts)
 * or any object that is not plain JSON data takes the copy, which is exact for every value.
 */
export function canonicalJson(value: unknown): string {
  const list = propertyList(value);
  return (list === null ? JSON.stringify(sortedCopy(value)) : JSON.stringify(value, list)) ?? 'null';
}

/**
 * The property list in canonical order, or null when the copy must write the body: a value
 * that is not plain JSON data, or a list so wide that it costs more than the copy. JSON.stringify
 * looks every listed key up on every object (ECMA-262 SerializeJSONObject), so the list's cost
 * is objects × distinct keys, where the copy's is the keys the objects have: a body of 20,000
 * one-key objects with distinct keys would take ~20 s of one thread, an easy way to stall the
 * server for anyone with a write key. A bulk body (records of the same attributes) lists each
 * key about once per record, far inside the bound.
 */
export function propertyList(value: unknown): string[] | null {
  const found = plainKeys(value);
  if (found === null || found.keys.length * found.objects > LIST_COST * Math.max(found.properties, 1)) return null;
  const index = found.keys.filter(isIndexKey).sort((a, b) => Number(a) - Number(b));
  const named = found.keys.filter((k) => !isIndexKey(k)).sort();
  return [...index, ...named];
}

/** Lookups per property the list may cost: about 1 for a bulk body (each record has every key); the copy is bounded by the properties alone. */
const LIST_COST = 4;

/** An array-index key (ECMA-262 §6.1.7): JS objects list these first, ascending. */
const isIndexKey = (k: string): boolean => /^(?:0|[1-9]\d{0,9})$/.test(k) && Number(k) < 4294967295;

/**
 * Every object key in `root`, with how many objects and properties hold them; null when it holds
 * a `__proto__` key or a value JSON.parse does not make (only then may the property list write
 * other than the copy). Iterative: any depth.
 */
function plainKeys(root: unknown): { keys: string[]; objects: number; properties: number } | null {
  const keys = new Set<string>();
  const stack: object[] = [];
  let objects = 0;
  let properties = 0;
  if (!visit(root, stack)) return null;
  while (stack.length > 0) {
    const v = stack.pop() as object;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) if (!visit(v[i] as unknown, stack)) return null;
      continue;
    }
    if (Object.getPrototypeOf(v) !== Object.prototype) return null;
    const o = v as Record<string, unknown>;
    objects++;
    // for…in, not Object.keys: no key array per object (a bulk body has one object per
    // record). It lists inherited enumerable keys too, which JSON data never has: one means
    // a polluted prototype, which the list would read through, so the copy writes it.
    for (const k in o) {
      if (!Object.hasOwn(o, k) || k === '__proto__' || k === 'toJSON' || !visit(o[k], stack)) return null;
      keys.add(k);
      properties++;
    }
  }
  return { keys: [...keys], objects, properties };
}

/** A JSON scalar passes, an object or array waits on the stack; anything else fails. */
function visit(v: unknown, stack: object[]): boolean {
  if (v === null) return true;
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'boolean':
      return true;
    case 'object':
      stack.push(v);
      return true;
    default:
      return false;
  }
}

function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = sortedCopy(value[i]);
    return out;
  }
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    // An own property, never the prototype: `__proto__` is refused by the body parser
    // (json-body.ts), and would be copied as data here all the same.
    if (k === '__proto__') Object.defineProperty(out, k, { value: sortedCopy(o[k]), enumerable: true, writable: true, configurable: true });
    else out[k] = sortedCopy(o[k]);
  }
  return out;
}
