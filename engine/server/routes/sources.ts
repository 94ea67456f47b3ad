import type { FastifyInstance } from 'fastify';
import { validateDeclaration, type ValidationResult } from '../../declaration/validate.js';
import type { Declaration } from '../../model/declaration.js';
import { sameJson } from '../../model/same-json.js';
import { ServiceError, isErrorCode, type ErrorCode } from '../../errors.js';
import type { AllowDestructive } from '../../plan/types.js';
import type { PushOptions } from '../../store/types.js';
import { parseIfMatch, type RouteDeps } from '../context.js';
import { ok } from '../envelope.js';
import * as s from '../schemas/admin.js';

/** Name codes a declaration can fail with, answered in preference to the generic one (contract.md §3). */
const NAME_CODES: readonly ErrorCode[] = ['SCHEMA_INVALID_OBJECT_NAME', 'SCHEMA_RESERVED_OBJECT_NAME', 'SCHEMA_INVALID_ATTRIBUTE_NAME'];

/** Sources whose last valid declaration a server remembers (one entry each, ~1.5 MB at most-scale). */
const REMEMBERED_SOURCES = 8;

/**
 * /schema/sources/:id (contract.md §3 "Schema"). The push validates the declaration first
 * (400, with the spec's name codes), then hands it to the store, which plans, refuses in
 * the contract's order and applies in one transaction. Exempt from rate limits (Limits rule 1).
 */
export async function sourceRoutes(app: FastifyInstance, { store }: RouteDeps): Promise<void> {
  /**
   * The last declaration each source sent that validated, and its result. A client re-sends
   * the whole declaration on every push (contract.md §3), usually the same as last time:
   * validateDeclaration is pure, so an input equal to the remembered one (sameJson: same
   * keys, order and values) has the same result, without ~20 ms of schema and rule checks
   * on a 1.5 MB declaration (issue 4: "the one-attribute change applied in < 100 ms").
   * Per server, a few sources; bodies are parsed per request, so nothing else holds `raw`.
   */
  const lastValid = new Map<string, { raw: unknown; result: ValidationResult<Declaration> }>();
  const validateOnce = (id: string, raw: unknown): ValidationResult<Declaration> => {
    const known = lastValid.get(id);
    if (known && sameJson(known.raw, raw)) return known.result;
    const result = validateDeclaration(raw);
    if (result.value && !result.diagnostics.some((d) => d.severity === 'error')) {
      lastValid.delete(id);
      lastValid.set(id, { raw, result });
      if (lastValid.size > REMEMBERED_SOURCES) lastValid.delete(lastValid.keys().next().value!);
    }
    return result;
  };

  app.get<{ Params: { id: string } }>(
    '/schema/sources/:id',
    { schema: s.getSourceSchema, config: { action: 'schema:read' } },
    async (request) => {
      const { id } = request.params;
      const source = store.findSource(id);
      if (!source) throw new ServiceError('SCHEMA_SOURCE_NOT_FOUND', `No schema source "${id}"`);
      const ownedBy = (o: { owner: { kind: string; id?: string } }) => o.owner.kind === 'source' && o.owner.id === id;
      return ok({
        id: source.id,
        version: source.version,
        appliedAt: source.appliedAt,
        declaration: source.declaration,
        objects: store.listObjects().filter(ownedBy).map((o) => o.name),
        views: store.listViews().filter(ownedBy).map((v) => v.name),
      });
    },
  );

  app.put<{
    Params: { id: string };
    Headers: { 'if-match'?: string };
    Body: { declaration: unknown; dryRun?: boolean; allowDestructive?: AllowDestructive };
  }>('/schema/sources/:id', { schema: s.pushSourceSchema, config: { action: 'schema:write' } }, async (request) => {
    const body = request.body;
    const raw = { objects: {}, views: {}, ...(body.declaration as object) };
    const result = validateOnce(request.params.id, raw);
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
    // The body is parsed per request and never changed after: the store may keep it.
    const options: PushOptions = { dryRun: body.dryRun === true, handOver: true };
    if (body.allowDestructive !== undefined) options.allowDestructive = body.allowDestructive;
    const ifMatch = parseIfMatch(request.headers['if-match']);
    if (typeof ifMatch === 'number') options.ifMatch = ifMatch;
    return ok(store.pushSource(request.params.id, result.value, options));
  });
}
