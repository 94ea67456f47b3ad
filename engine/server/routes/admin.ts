import type { FastifyInstance } from 'fastify';
import type { ViewDecl } from '../../model/declaration.js';
import { viewNotFound } from '../../store/views.js';
import { requireKeyRole } from '../../store/keys.js';
import type { Scope } from '../../store/types.js';
import { actorOf, type RouteDeps } from '../context.js';
import { ok } from '../envelope.js';
import { requireWithinRights, scopesToGrant } from '../permissions.js';
import * as s from '../schemas/admin.js';

/** Keys and views (contract.md §3 "Roles, keys, views"). */
export async function adminRoutes(app: FastifyInstance, { store, authCache }: RouteDeps): Promise<void> {
  app.post<{ Body: { name: string; role: string; scopes?: Scope[] | null } }>(
    '/keys',
    { schema: s.createKeySchema, config: { action: 'keys:manage' } },
    async (request, reply) => {
      const actor = actorOf(request);
      requireKeyRole(request.body.role);
      // The answer carries the scopes actually stored, so a caller who asked for none sees
      // that its new key inherited the creator's limits rather than being unlimited.
      const scopes = scopesToGrant(actor, request.body.scopes);
      requireWithinRights(actor, { role: request.body.role, scopes });
      const { key, secret } = store.createKey({ name: request.body.name, role: request.body.role, scopes });
      reply.code(201);
      return ok({ ...key, secret });
    },
  );

  app.get('/keys', { schema: s.listKeysSchema, config: { action: 'keys:manage' } }, async () => {
    const keys = store.listKeys();
    return ok(keys, { nextCursor: null, total: keys.length });
  });

  app.delete<{ Params: { id: string } }>(
    '/keys/:id',
    { schema: s.revokeKeySchema, config: { action: 'keys:manage' } },
    async (request) => {
      const target = store.listKeys().find((k) => k.id === request.params.id);
      // Only a key within the caller's own rights (the same rule as create); an unknown id
      // is left to the store's answer.
      if (target) requireWithinRights(actorOf(request), target);
      store.revokeKey(request.params.id);
      // A revoked key must stop working on the next request (contract.md §3).
      authCache?.clear();
      return ok({ id: request.params.id });
    },
  );

  app.get('/views', { schema: s.listViewsSchema, config: { action: 'schema:read' } }, async () => {
    const views = store.listViews();
    return ok(views, { nextCursor: null, total: views.length });
  });

  app.get<{ Params: { name: string } }>(
    '/views/:name',
    { schema: s.getViewSchema, config: { action: 'schema:read' } },
    async (request) => {
      const view = store.findView(request.params.name);
      if (!view) throw viewNotFound(request.params.name);
      return ok(view);
    },
  );

  app.put<{ Params: { name: string }; Body: ViewDecl }>(
    '/views/:name',
    { schema: s.putViewSchema, config: { action: 'schema:write' } },
    async (request) => ok(store.putView(request.params.name, request.body)),
  );

  app.delete<{ Params: { name: string } }>(
    '/views/:name',
    { schema: s.deleteViewSchema, config: { action: 'schema:write' } },
    async (request) => {
      store.deleteView(request.params.name);
      return ok({ name: request.params.name });
    },
  );

  // Running a view reads records, so it takes what a record search takes (records:read).
  app.get<{ Params: { name: string }; Querystring: { limit?: number; cursor?: string } }>(
    '/views/:name/records',
    { schema: s.runViewSchema, config: { action: 'records:read' } },
    async (request) => {
      const { limit, cursor } = request.query;
      const page = store.runView(request.params.name, { ...(limit !== undefined ? { limit } : {}), ...(cursor !== undefined ? { cursor } : {}) });
      return ok(page.records, { nextCursor: page.nextCursor, ...(page.total !== undefined ? { total: page.total } : {}) });
    },
  );
}
