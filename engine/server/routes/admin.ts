import type { FastifyInstance } from 'fastify';
import type { ViewDecl } from '../../model/declaration.js';
import { viewNotFound } from '../../store/index.js';
import type { Scope } from '../../store/types.js';
import { actorOf, type RouteDeps } from '../context.js';
import { ok } from '../envelope.js';
import { requirePermission, requireWithinRights, scopesToGrant } from '../permissions.js';
import * as s from '../schemas/admin.js';

/** Keys and views (contract.md §3 "Roles, keys, views"). */
export async function adminRoutes(app: FastifyInstance, { store, authCache }: RouteDeps): Promise<void> {
  app.post<{ Body: { name: string; role: string; scopes?: Scope[] | null } }>(
    '/keys',
    { schema: s.createKeySchema, config: { action: 'keys:manage' } },
    async (request, reply) => {
      const actor = actorOf(request);
      // The answer carries the scopes actually stored, so a caller who asked for none sees
      // that its new key inherited the creator's limits rather than being unlimited.
      const scopes = scopesToGrant(actor, request.body.scopes);
      // The rights check runs in the store's transaction, after the role is known to exist.
      const { key, secret } = await store.createKey({ name: request.body.name, role: request.body.role, scopes }, (k) => requireWithinRights(actor, k));
      reply.code(201);
      return ok({ ...key, secret });
    },
  );

  app.get('/keys', { schema: s.listKeysSchema, config: { action: 'keys:manage' } }, async () => {
    const keys = await store.listKeys();
    return ok(keys, { nextCursor: null, total: keys.length });
  });

  app.delete<{ Params: { id: string } }>(
    '/keys/:id',
    { schema: s.revokeKeySchema, config: { action: 'keys:manage' } },
    async (request) => {
      // Only a key within the caller's own rights (the same rule as create), weighed in the
      // revoking transaction against the stored key; an unknown id is the store's 404.
      const actor = actorOf(request);
      await store.revokeKey(request.params.id, (k) => requireWithinRights(actor, k));
      // A revoked key must stop working on the next request (contract.md §3).
      authCache?.clear();
      return ok({ id: request.params.id });
    },
  );

  app.get('/views', { schema: s.listViewsSchema, config: { action: 'schema:read' } }, async () => {
    const views = await store.listViews();
    return ok(views, { nextCursor: null, total: views.length });
  });

  app.get<{ Params: { name: string } }>(
    '/views/:name',
    { schema: s.getViewSchema, config: { action: 'schema:read' } },
    async (request) => {
      const view = await store.findView(request.params.name);
      if (!view) throw viewNotFound(request.params.name);
      return ok(view);
    },
  );

  app.put<{ Params: { name: string }; Body: ViewDecl }>(
    '/views/:name',
    { schema: s.putViewSchema, config: { action: 'schema:write' } },
    async (request) => ok(await store.putView(request.params.name, request.body)),
  );

  app.delete<{ Params: { name: string } }>(
    '/views/:name',
    { schema: s.deleteViewSchema, config: { action: 'schema:write' } },
    async (request) => {
      await store.deleteView(request.params.name);
      return ok({ name: request.params.name });
    },
  );

  // Running a view reads records, so it takes what a record search takes (records:read).
  app.get<{ Params: { name: string }; Querystring: { limit?: number; cursor?: string } }>(
    '/views/:name/records',
    { schema: s.runViewSchema, config: { action: 'records:read' } },
    async (request) => {
      const view = await store.findView(request.params.name);
      if (!view) throw viewNotFound(request.params.name);
      // A custom role reads records per object: the view's object decides.
      requirePermission(actorOf(request), 'records:read', { object: view.object, record: 'read' });
      const { limit, cursor } = request.query;
      const page = await store.runView(request.params.name, { ...(limit !== undefined ? { limit } : {}), ...(cursor !== undefined ? { cursor } : {}) });
      return ok(page.records, { nextCursor: page.nextCursor, ...(page.total !== undefined ? { total: page.total } : {}) });
    },
  );
}
