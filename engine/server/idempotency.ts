import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../store/types.js';
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
  const scope = `${actorOf(request).keyId} ${request.method} ${request.routeOptions.url ?? ''} ${JSON.stringify(request.params)}`;
  const hash = createHash('sha256').update(canonicalJson(request.body)).digest('hex');
  // Invariant (recall → write → remember): the three run in one write transaction, which
  // no other write interleaves with (engine/store/port.ts Driver.transaction), so a repeat
  // sent meanwhile waits and then finds the answer; a write whose answer could not be
  // remembered is undone with it.
  return store.transaction(async (tx) => {
    const prior = await tx.recallIdempotent(scope, key, hash);
    if (prior) {
      reply.code(prior.status).header('idempotent-replayed', 'true');
      return prior.body;
    }
    const body = ok(await work(tx));
    await tx.rememberIdempotent(scope, key, hash, { status, body });
    reply.code(status);
    return body;
  });
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` are the same body. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
    }
    return v;
  }) ?? 'null';
}
