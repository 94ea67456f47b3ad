import { isOwnedBySource, type Owner } from '../../model/stored.js';
import type { FastifyInstance } from 'fastify';
import { forbidden, ServiceError, isErrorCode, type ErrorCode } from '../../errors.js';
import type { PushRequest } from '../../plan/push.js';
import { ROLE_STEP_ACTIONS } from '../../plan/types.js';
import type { PushOptions } from '../../store/types.js';
import { actorOf, parseIfMatch, type RouteDeps } from '../context.js';
import { DeclarationCheck } from '../declaration-cache.js';
import { ok } from '../envelope.js';
import { pushAction, requirePermission, roleAllows } from '../permissions.js';
import * as s from '../schemas/admin.js';

/** Name codes a declaration can fail with, answered in preference to the generic one (contract.md §3). */
const NAME_CODES: readonly ErrorCode[] = ['SCHEMA_INVALID_OBJECT_NAME', 'SCHEMA_RESERVED_OBJECT_NAME', 'SCHEMA_INVALID_ATTRIBUTE_NAME', 'SCHEMA_SYSTEM_ENTITY_IMMUTABLE'];

/**
 * /schema/sources/:id (contract.md §3 "Schema"). The push validates the declaration first
 * (400, with the spec's name codes), then hands it to the store, which plans, refuses in
 * the contract's order and applies in one transaction. Exempt from rate limits (Limits rule 1).
 */
/** Whether every schema failure lies inside one object or view of the declaration (`/declaration/objects/deal/…`). */
function onlyInsideDeclaration(error: { validation?: { instancePath?: string }[] }): boolean {
  const failures = error.validation ?? [];
  return failures.length > 0 && failures.every((f) => /^\/declaration\/(objects|views)\/[^/]+/.test(f.instancePath ?? ''));
}

export async function sourceRoutes(app: FastifyInstance, { store }: RouteDeps): Promise<void> {
  const check = new DeclarationCheck();
  app.get<{ Params: { id: string } }>(
    '/schema/sources/:id',
    { schema: s.getSourceSchema, config: { action: 'schema:read' } },
    async (request) => {
      const { id } = request.params;
      const source = await store.findSource(id);
      if (!source) throw new ServiceError('SCHEMA_SOURCE_NOT_FOUND', `No schema source "${id}"`);
      const ownedBy = (o: { owner: Owner }) => isOwnedBySource(o.owner, id);
      return ok({
        id: source.id,
        version: source.version,
        appliedAt: source.appliedAt,
        declaration: source.declaration,
        objects: (await store.listObjects()).filter(ownedBy).map((o) => o.name),
        views: (await store.listViews()).filter(ownedBy).map((v) => v.name),
        roles: (await store.listRoles()).filter(ownedBy).map((r) => r.name),
      });
    },
  );

  app.get<{ Params: { id: string }; Querystring: { limit?: number; cursor?: string } }>(
    '/schema/sources/:id/history',
    { schema: s.sourceHistorySchema, config: { action: 'schema:read' } },
    async (request) => {
      const { id } = request.params;
      if (!(await store.findSource(id))) throw new ServiceError('SCHEMA_SOURCE_NOT_FOUND', `No schema source "${id}"`);
      const { limit, cursor } = request.query;
      const page = await store.sourceHistory(id, { ...(limit !== undefined ? { limit } : {}), ...(cursor !== undefined ? { cursor } : {}) });
      return ok(page.entries, { nextCursor: page.nextCursor });
    },
  );

  app.put<{
    Params: { id: string };
    Headers: { 'if-match'?: string };
    // the wire's body (engine/plan/push.ts), its declaration unchecked until validateDeclaration
    Body: Omit<PushRequest, 'declaration'> & { declaration: unknown };
  }>(
    '/schema/sources/:id',
    // The route schema types the declaration for openapi.json (declarationShapeSchema). A
    // failure inside an object or view is held back so validateDeclaration answers first,
    // with the spec's name codes and did-you-mean suggestions (contract.md §3: "a declaration
    // that fails validation is 400 first, with the spec's name codes"); the shape is never
    // stricter than that check. A body that is not { declaration: { objects, views } } is
    // the plain 400 Validation failed, as before.
    { schema: s.pushSourceSchema, config: { action: 'schema:read' }, attachValidation: true },
    async (request) => {
      const body = request.body;
      // The route lets every schema reader in; what the push does decides the rest (a dry run
      // reads, a real push writes), checked before the body's validation answers.
      requirePermission(actorOf(request), pushAction(body?.dryRun === true));
      if (request.validationError && !onlyInsideDeclaration(request.validationError)) throw request.validationError;
      const raw = { objects: {}, views: {}, ...(body.declaration as object) };
      const stored = new Set((await store.listObjects()).map((o) => o.name));
      const result = check.validate(request.params.id, raw, () => stored);
      const errors = result.diagnostics.filter((d) => d.severity === 'error');
      if (!result.value || errors.length > 0) {
        const named = errors.find((d) => isErrorCode(d.code) && NAME_CODES.includes(d.code));
        const code: ErrorCode = named?.code && isErrorCode(named.code) ? named.code : 'SCHEMA_VALIDATION_FAILED';
        const first = named ?? errors[0];
        throw new ServiceError(code, first ? `Declaration is invalid: ${first.message}` : 'Declaration is invalid', {
          errors: errors.map((d) => ({
            path: ['declaration', ...d.path],
            message: d.suggestion ? `${d.message} (did you mean "${d.suggestion}"?)` : d.message,
          })),
        });
      }
      // Anything else the route schema refused (dryRun: "yes", a malformed if-match).
      if (request.validationError) throw request.validationError;
      // The body is parsed per request and never changed after: the store may keep it.
      const options: PushOptions = { dryRun: body.dryRun === true, handOver: true };
      if (body.allowDestructive !== undefined) options.allowDestructive = body.allowDestructive;
      if (body.expectPlan !== undefined) options.expectPlan = body.expectPlan;
      if (!options.dryRun) {
        const actor = actorOf(request);
        options.by = { id: actor.keyId, name: (await store.listKeys()).find((k) => k.id === actor.keyId)?.name ?? '' };
        // Roles decide what every key may do: a push that creates, changes, renames or drops
        // one needs a role that may manage keys (owner, admin), not only schema write — a
        // custom role with schema write could otherwise grant itself every object's records.
        // The role, not the scopes: roles are code, and a CI key scoped to schema:write
        // pushes them (docs/ci.md).
        options.authorize = (plan) => {
          if (plan.steps.some((step) => ROLE_STEP_ACTIONS.has(step.action)) && !roleAllows(actor, 'keys:manage')) throw forbidden();
        };
      }
      const ifMatch = parseIfMatch(request.headers['if-match']);
      if (typeof ifMatch === 'number') options.ifMatch = ifMatch;
      return ok(await store.pushSource(request.params.id, result.value, options));
    },
  );
}
