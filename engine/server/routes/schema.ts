import type { FastifyInstance } from 'fastify';
import type { AttributePatch, AttributeSpec } from '../../model/attribute.js';
import { parseSize } from '../../model/sizes.js';
import { requireStoredValues } from '../../model/stored-values.js';
import type { RouteDeps } from '../context.js';
import { ok } from '../envelope.js';
import * as s from '../schemas/schema-objects.js';

/**
 * /schema/objects… (contract.md §3 "Schema"). Thin over the Store: every rule the spec
 * gives a code for (names, protection, duplicates, references, data checks) lives there.
 */
const RUNTIME = { kind: 'runtime' } as const;

/** `maxFileSize` may arrive as "10MB" (contract.md §2); the store takes bytes. */
function normalise<T extends object>(spec: T): T {
  const size = (spec as { maxFileSize?: unknown }).maxFileSize;
  if (typeof size === 'string') return { ...spec, maxFileSize: parseSize(size) ?? size };
  return spec;
}

export async function schemaRoutes(app: FastifyInstance, { store }: RouteDeps): Promise<void> {
  app.get('/schema/objects', { schema: s.listObjectsSchema, config: { action: 'schema:read' } }, async () => {
    const objects = await store.listObjects();
    return ok(objects, { nextCursor: null, total: objects.length });
  });

  app.post<{ Body: { name: string; label?: string; description?: string; attributes?: AttributeSpec[] } }>(
    '/schema/objects',
    { schema: s.createObjectSchema, config: { action: 'schema:write' } },
    async (request, reply) => {
      const { attributes, ...rest } = request.body;
      // The name has its own rule and code (the store checks it); attributes go through
      // checkAttributeInput. What is left is free text.
      requireStoredValues({ label: rest.label, description: rest.description });
      const input = attributes ? { ...rest, attributes: attributes.map(normalise) } : rest;
      reply.code(201);
      return ok(await store.createObject(input, RUNTIME));
    },
  );

  app.get<{ Params: { objectId: string } }>(
    '/schema/objects/:objectId',
    { schema: s.getObjectSchema, config: { action: 'schema:read' } },
    async (request) => ok(await store.requireObject(request.params.objectId)),
  );

  app.delete<{ Params: { objectId: string }; Querystring: { force?: boolean } }>(
    '/schema/objects/:objectId',
    { schema: s.deleteObjectSchema, config: { action: 'schema:write' } },
    async (request) => {
      const object = await store.requireObject(request.params.objectId);
      await store.deleteObject(object.id, { force: request.query.force === true });
      return ok({ id: object.id });
    },
  );

  app.post<{ Params: { objectId: string }; Body: AttributeSpec }>(
    '/schema/objects/:objectId/attributes',
    { schema: s.addAttributeSchema, config: { action: 'schema:write' } },
    async (request, reply) => {
      const attribute = await store.addAttribute(request.params.objectId, normalise(request.body), RUNTIME);
      reply.code(201);
      return ok(attribute);
    },
  );

  app.put<{ Params: { objectId: string; id: string }; Body: AttributePatch }>(
    '/schema/objects/:objectId/attributes/:id',
    { schema: s.updateAttributeSchema, config: { action: 'schema:write' } },
    async (request) => ok(await store.updateAttribute(request.params.objectId, request.params.id, normalise(request.body))),
  );

  app.delete<{ Params: { objectId: string; id: string } }>(
    '/schema/objects/:objectId/attributes/:id',
    { schema: s.deleteAttributeSchema, config: { action: 'schema:write' } },
    async (request) => {
      const { objectId, id } = request.params;
      const object = await store.requireObject(objectId);
      const attr = object.attributes.find((a) => a.id === id || a.name === id);
      await store.deleteAttribute(objectId, id);
      return ok({ id: attr?.id ?? id });
    },
  );
}
