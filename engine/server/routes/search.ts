import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../../errors.js';
import type { SearchHit } from '../../model/search-hit.js';
import type { Actor, Store } from '../../store/types.js';
import { actorOf, type RouteDeps } from '../context.js';
import { ok } from '../envelope.js';
import { can } from '../permissions.js';
import * as s from '../schemas/search.js';

/**
 * POST /search and GET /global-search (contract.md §3 "Cross-object search"; both in the
 * global-search rate bucket, rate-limit.ts). The route decides WHICH objects are searched
 * — those the key may read (permissions.ts `can`, records:read on each object) — and the
 * store searches only those, so a hit in an unreadable object is never returned nor
 * counted (it is not in the SQL at all, not filtered afterwards).
 */
export async function searchRoutes(app: FastifyInstance, { store }: RouteDeps): Promise<void> {
  const config = { action: 'search' } as const;

  app.post<{ Body: { query: string; objects?: string[]; limit?: number } }>('/search', { schema: s.searchSchema, config }, async (request) => {
    const { query, objects, limit } = request.body;
    return ok(await run(store, actorOf(request), requireQuery(query, 'query'), objects, limit));
  });

  app.get<{ Querystring: { q: string; limit?: number } }>('/global-search', { schema: s.globalSearchSchema, config }, async (request) => {
    const { q, limit } = request.query;
    return ok(await run(store, actorOf(request), requireQuery(q, 'q'), undefined, limit));
  });
}

/** An empty or blank query is a 400 naming the field (issue 17 "Bad input"). */
function requireQuery(query: string, field: string): string {
  if (query.trim() === '') {
    const message = `${field}: must contain a word to search for`;
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', message, { errors: [{ path: [field], message: 'must contain a word to search for' }] });
  }
  return query;
}

async function run(store: Store, actor: Actor, query: string, named: string[] | undefined, limit = s.DEFAULT_SEARCH_LIMIT): Promise<SearchHit[]> {
  const all = (await store.listObjects()).map((o) => o.name);
  const readable = all.filter((object) => can(actor, 'records:read', { object, record: 'read' }));
  if (named !== undefined) {
    // A name that is no object at all is a 404 for a key that may read the schema (a typo
    // deserves to be told); for any other key it finds nothing, as an unreadable object
    // does, so the answer never tells which objects exist.
    const known = new Set(all);
    const missing = named.find((n) => !known.has(n));
    if (missing !== undefined && can(actor, 'schema:read')) throw new ServiceError('SCHEMA_OBJECT_NOT_FOUND', `Object "${missing}" does not exist`);
  }
  const wanted = named === undefined ? readable : readable.filter((o) => named.includes(o));
  const objects = named === undefined && wanted.length === all.length ? null : wanted;
  return store.globalSearch({ query, objects, limit });
}
