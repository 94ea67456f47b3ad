import type { FastifyInstance } from 'fastify';
import { BUILTIN_ROLES, isBuiltinRole, type RoleDecl } from '../../model/roles.js';
import type { StoredRole } from '../../model/stored.js';
import { roleNotFound } from '../../store/index.js';
import type { RouteDeps } from '../context.js';
import { ok } from '../envelope.js';
import { describeBuiltinRole } from '../permissions.js';
import * as s from '../schemas/roles.js';

/**
 * Roles (contract.md §3 "Roles, keys, views"). Reading them needs schema read (a role is
 * part of what the schema means); changing them needs keys:manage, since a role is what
 * keys are granted by. Built-ins are listed in the same shape, derived from the role table.
 */
const builtIn = (name: (typeof BUILTIN_ROLES)[number]) => ({ name, builtIn: true, ...describeBuiltinRole(name), owner: { kind: 'core' } });
const custom = (r: StoredRole) => ({ ...r, builtIn: false, schema: r.schema ?? 'none', keys: 'none' });

export async function roleRoutes(app: FastifyInstance, { store }: RouteDeps): Promise<void> {
  app.get('/roles', { schema: s.listRolesSchema, config: { action: 'schema:read' } }, async () => {
    const roles = [...BUILTIN_ROLES.map(builtIn), ...(await store.listRoles()).map(custom)];
    return ok(roles, { nextCursor: null, total: roles.length });
  });

  app.get<{ Params: { id: string } }>('/roles/:id', { schema: s.getRoleSchema, config: { action: 'schema:read' } }, async (request) => {
    const name = request.params.id;
    if (isBuiltinRole(name)) return ok(builtIn(name));
    const role = await store.findRole(name);
    if (!role) throw roleNotFound(name);
    return ok(custom(role));
  });

  app.post<{ Body: RoleDecl & { name: string } }>('/roles', { schema: s.createRoleSchema, config: { action: 'keys:manage' } }, async (request, reply) => {
    const { name, ...decl } = request.body;
    reply.code(201);
    return ok(custom(await store.createRole(name, decl)));
  });

  app.put<{ Params: { id: string }; Body: RoleDecl }>('/roles/:id', { schema: s.putRoleSchema, config: { action: 'keys:manage' } }, async (request) =>
    ok(custom(await store.putRole(request.params.id, request.body))),
  );

  app.delete<{ Params: { id: string } }>('/roles/:id', { schema: s.deleteRoleSchema, config: { action: 'keys:manage' } }, async (request) => {
    await store.deleteRole(request.params.id);
    return ok({ name: request.params.id });
  });
}
