/**
 * JSON Schema fragments shared by the route schemas. These schemas are the one
 * definition of each request and response: Fastify validates requests with them and
 * @fastify/swagger turns them into GET /v1/openapi.json (contract.md §3 "Also served").
 */
export const errorEnvelope = {
  type: 'object',
  description: 'The error envelope of service-interface.md "Errors".',
  required: ['success', 'statusCode', 'message'],
  properties: {
    success: { type: 'boolean', const: false },
    statusCode: { type: 'integer' },
    message: { type: 'string' },
    code: { type: 'string', description: 'Stable machine-readable code; absent for body validation failures and 429.' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: {
          path: { type: 'array', items: { type: ['string', 'integer'] } },
          message: { type: 'string' },
        },
      },
    },
  },
} as const;

export const pageSchema = {
  type: 'object',
  required: ['nextCursor'],
  properties: {
    nextCursor: { type: ['string', 'null'] },
    total: { type: 'integer' },
  },
} as const;

/** `{ success: true, data }` (or with `page` for lists) around a data schema. */
export function envelope(data: object, options: { list?: boolean } = {}): object {
  return {
    type: 'object',
    required: options.list ? ['success', 'data', 'page'] : ['success', 'data'],
    properties: {
      success: { type: 'boolean', const: true },
      data,
      ...(options.list ? { page: pageSchema } : {}),
    },
  };
}

/**
 * Every route's error answers: the spec's envelope, as 4XX and 5XX. openapi.ts replaces both
 * with one shared component in the document.
 */
export const errorResponse = { ...errorEnvelope, description: 'Error envelope' };
export const errorResponses = { '4XX': errorResponse, '5XX': errorResponse } as const;

/** The `etag: "<version>"` answer header (contract.md §3 records). */
export const etagHeader = {
  etag: { type: 'string', description: 'The record version, quoted ("3"): send it back in if-match.' },
} as const;

/** Responses of a route: the success status with its data (and answer headers), and the error envelope otherwise. */
export function responses(
  status: number,
  data: object,
  options: { list?: boolean; description?: string; headers?: Record<string, object> } = {},
): Record<string, object> {
  return {
    [status]: {
      ...envelope(data, options),
      description: options.description ?? 'Success',
      ...(options.headers ? { headers: options.headers } : {}),
    },
    ...errorResponses,
  };
}

export const idParam = (name: string, description: string): object => ({
  type: 'object',
  required: [name],
  properties: { [name]: { type: 'string', minLength: 1, maxLength: 200, description } },
});

/**
 * Path params that look something up by name or id (an object, attribute, record). No
 * length bounds: a key that matches nothing, "" or over-long included, answers the route's
 * NOT_FOUND code (SCHEMA_OBJECT_NOT_FOUND, SCHEMA_ATTRIBUTE_NOT_FOUND, …) rather than a
 * code-less 400; Fastify's maxParamLength bounds the input.
 */
export const lookupParams = (described: Record<string, string>): { type: 'object'; required: string[]; properties: Record<string, { type: 'string'; description: string }> } => ({
  type: 'object',
  required: Object.keys(described),
  properties: Object.fromEntries(Object.entries(described).map(([k, description]) => [k, { type: 'string', description }])),
});

export const freeMapping = {
  type: 'object',
  description: 'A flat mapping of attribute name to value; values are checked by the attribute types.',
  additionalProperties: true,
} as const;

export const deletedIdSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' } },
} as const;

export const ownerSchema = {
  type: 'object',
  required: ['kind'],
  properties: {
    kind: { type: 'string', enum: ['core', 'bundle', 'source', 'runtime'] },
    id: { type: 'string' },
  },
} as const;

/**
 * `if-match` as contract.md §3 allows it, and nothing else: `"<version>"`, a bare version,
 * or `*`. Quotes come in pairs; a weak tag `W/"3"` is refused because If-Match compares
 * strongly (RFC 9110 §13.1.1), so accepting it would promise a match it does not mean.
 * The route schemas take its source as their pattern and parseIfMatch reads its groups
 * (1: `*`, 2: quoted version, 3: bare version), so the two cannot drift apart.
 */
export const IF_MATCH = /^\s*(?:(\*)|"(\d{1,15})"|(\d{1,15}))\s*$/;
export const IF_MATCH_PATTERN = IF_MATCH.source;

export const securityRequired = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
