import type { FastifyInstance } from 'fastify';
import type { Filter, SortSpec } from '../../model/filter.js';
import type { BulkUpdateItem, SearchInput } from '../../store/types.js';
import { actorOf, parseIfMatch, type RouteDeps } from '../context.js';
import { ok } from '../envelope.js';
import { withIdempotency } from '../idempotency.js';
import { bulkAnswer } from '../prefer.js';
import * as s from '../schemas/records.js';

type Values = Record<string, unknown>;
interface ObjectParams { objectName: string }
interface RecordParams { objectName: string; id: string }

/**
 * /records/:objectName… (contract.md §3 "Records"). Value validation, versions, unique
 * checks and all-or-nothing bulk writes are the store's; the routes add HTTP: status
 * codes, etag / if-match, idempotency keys on the POST routes, and `Prefer: return=minimal`
 * on the bulk writes (prefer.ts).
 */
export async function recordRoutes(app: FastifyInstance, { store }: RouteDeps): Promise<void> {
  // The record action a custom role is checked for, on the route's object (permissions.ts).
  const create = { action: 'records:write', record: 'create' } as const;
  const update = { action: 'records:write', record: 'update' } as const;
  const remove = { action: 'records:write', record: 'delete' } as const;
  const read = { action: 'records:read', record: 'read' } as const;

  // Static segments first in the docs; find-my-way prefers them over :id anyway.
  app.post<{ Params: ObjectParams; Body: { records: Values[] } }>(
    '/records/:objectName/bulk-create',
    { schema: s.bulkCreateSchema, config: create },
    async (request, reply) => {
      const answer = bulkAnswer(request, reply, 'created');
      return withIdempotency(store, request, reply, 201, async (tx) =>
        answer(await tx.bulkCreate(request.params.objectName, request.body.records, actorOf(request))),
      );
    },
  );

  app.post<{ Params: ObjectParams; Body: { records: BulkUpdateItem[] } }>(
    '/records/:objectName/bulk-update',
    { schema: s.bulkUpdateSchema, config: update },
    async (request, reply) => {
      const answer = bulkAnswer(request, reply, 'updated');
      return withIdempotency(store, request, reply, 200, async (tx) =>
        answer(await tx.bulkUpdate(request.params.objectName, request.body.records, actorOf(request))),
      );
    },
  );

  app.post<{ Params: ObjectParams; Body: { ids: string[] } }>(
    '/records/:objectName/bulk-delete',
    { schema: s.bulkDeleteSchema, config: remove },
    async (request, reply) =>
      withIdempotency(store, request, reply, 200, (tx) => tx.bulkDelete(request.params.objectName, request.body.ids)),
  );

  app.post<{ Params: ObjectParams; Body: { filter?: Filter; sort?: SortSpec[]; limit?: number; cursor?: string } | undefined }>(
    '/records/:objectName/search',
    {
      schema: s.searchRecordsSchema,
      config: read,
      // A search with no body at all means "everything, first page" (same as `{}`).
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const input: SearchInput = {};
      if (body.filter !== undefined) input.filter = body.filter;
      if (body.sort !== undefined) input.sort = body.sort;
      if (body.limit !== undefined) input.limit = body.limit;
      if (body.cursor !== undefined) input.cursor = body.cursor;
      const page = await store.search(request.params.objectName, input);
      const meta: { nextCursor: string | null; total?: number } = { nextCursor: page.nextCursor };
      if (page.total !== undefined) meta.total = page.total;
      return ok(page.records, meta);
    },
  );

  app.post<{ Params: ObjectParams; Body: Values }>(
    '/records/:objectName',
    { schema: s.createRecordSchema, config: create },
    async (request, reply) =>
      withIdempotency(store, request, reply, 201, (tx) =>
        tx.createRecord(request.params.objectName, request.body, actorOf(request)),
      ),
  );

  app.get<{ Params: RecordParams }>('/records/:objectName/:id', { schema: s.getRecordSchema, config: read }, async (request, reply) => {
    const record = await store.getRecord(request.params.objectName, request.params.id);
    reply.header('etag', `"${record.version}"`);
    return ok(record);
  });

  app.put<{ Params: RecordParams; Body: Values; Headers: { 'if-match': string } }>(
    '/records/:objectName/:id',
    { schema: s.updateRecordSchema, config: update },
    async (request, reply) => {
      // The schema makes if-match required and well-formed (contract.md §3), so this is defined.
      const ifMatch = parseIfMatch(request.headers['if-match']) ?? '*';
      const record = await store.updateRecord(request.params.objectName, request.params.id, request.body, ifMatch, actorOf(request));
      reply.header('etag', `"${record.version}"`);
      return ok(record);
    },
  );

  app.delete<{ Params: RecordParams }>('/records/:objectName/:id', { schema: s.deleteRecordSchema, config: remove }, async (request) =>
    ok(await store.deleteRecord(request.params.objectName, request.params.id)),
  );
}
