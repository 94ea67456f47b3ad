import type { SwaggerOptions } from '@fastify/swagger';
import { errorEnvelope } from './schemas/common.js';

/**
 * GET /v1/openapi.json (contract.md §3 "Also served"). The route schemas are the one
 * definition of every body and answer; @fastify/swagger turns them into paths and this
 * module adds only what is the same for every route, so no route can forget it:
 * - `servers: [{ url: '/v1' }]` with paths relative to it, so a generated client takes the
 *   instance's base URL (`http://127.0.0.1:4400/v1`) as the SDK and CLI do;
 * - the error envelope as one shared component, answered as 4XX and 5XX by every operation
 *   (the route schemas mark where it goes with `errorResponse`);
 * - `x-request-id` on every answer (contract.md §3: "Every response, success or error").
 */
const ERROR_REF = { $ref: '#/components/responses/Error' };
const REQUEST_ID_REF = { $ref: '#/components/headers/RequestId' };
const PREFIX = '/v1';

type Operation = { responses?: Record<string, Record<string, unknown>> };

export const openapiOptions: SwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'schemasync local server',
      version: '1',
      description: 'The Records and Schema service interface as served by `schemasync serve` (contract.md §3).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: PREFIX, description: 'This server (the base URL the SDK and CLI take ends in /v1)' }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <key>' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The same key in x-api-key' },
      },
      schemas: { ErrorEnvelope: errorEnvelope as never },
      headers: {
        RequestId: {
          description: 'The request id (a UUID): a valid UUID sent in x-request-id is echoed, else a new one.',
          schema: { type: 'string', format: 'uuid' },
        },
      },
      responses: {
        Error: {
          description: 'The error envelope (service-interface.md "Errors"): 400 validation, 401/403 keys and permissions, 404, 409, 413, 429; 5xx masked',
          headers: { 'x-request-id': REQUEST_ID_REF },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
        },
      },
    },
  },
  transformObject: (document) => {
    if (!('openapiObject' in document)) return document.swaggerObject;
    const { openapiObject } = document;
    const paths: Record<string, Record<string, Operation>> = {};
    for (const [path, item] of Object.entries((openapiObject.paths ?? {}) as Record<string, Record<string, Operation>>)) {
      for (const operation of Object.values(item)) shareAnswers(operation);
      paths[path.startsWith(PREFIX) ? path.slice(PREFIX.length) || '/' : path] = item;
    }
    return { ...openapiObject, paths } as never;
  },
};

function shareAnswers(operation: Operation): void {
  const responses = operation.responses ?? {};
  for (const [status, response] of Object.entries(responses)) {
    if (/^[45]XX$/.test(status)) {
      responses[status] = ERROR_REF;
      continue;
    }
    response['headers'] = { ...(response['headers'] as object), 'x-request-id': REQUEST_ID_REF };
  }
}
