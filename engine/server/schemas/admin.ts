import { FILTER_SCHEMA, SORT_ITEM_SCHEMA, declarationShapeSchema } from '../../declaration/json-schema.js';
import { SCOPES } from '../../store/types.js';
import { IF_MATCH_PATTERN, deletedIdSchema, errorResponses, idParam, ownerSchema, responses, securityRequired } from './common.js';

/** Keys, views, sources and health (contract.md §3 "Roles, keys, views", "Schema"). */
const scopes = { type: ['array', 'null'], uniqueItems: true, items: { type: 'string', enum: [...SCOPES] } } as const;

const keyOut = {
  type: 'object',
  required: ['id', 'name', 'role', 'scopes'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string' },
    scopes,
    createdAt: { type: 'string' },
    revokedAt: { type: ['string', 'null'] },
    lastUsedAt: { type: ['string', 'null'] },
  },
} as const;

export const createKeySchema = {
  operationId: 'createKey',
  tags: ['keys'], security: securityRequired, summary: 'Create an API key (the secret is shown this once)',
  body: {
    type: 'object',
    required: ['name', 'role'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      role: { type: 'string', minLength: 1, maxLength: 200, description: 'owner, admin, member, viewer or a custom role' },
      scopes,
    },
  },
  response: responses(201, {
    ...keyOut,
    required: [...keyOut.required, 'secret'],
    properties: { ...keyOut.properties, secret: { type: 'string' } },
  }),
};

export const listKeysSchema = {
  operationId: 'listKeys',
  tags: ['keys'], security: securityRequired, summary: 'List API keys (never their secrets)',
  response: responses(200, { type: 'array', items: keyOut }, { list: true }),
};

export const revokeKeySchema = {
  operationId: 'revokeKey',
  tags: ['keys'], security: securityRequired, summary: 'Revoke an API key (not the last owner key)',
  params: idParam('id', 'the key id'),
  response: responses(200, deletedIdSchema),
};

const viewOut = {
  type: 'object',
  required: ['name', 'object', 'owner'],
  additionalProperties: true,
  properties: {
    name: { type: 'string' },
    object: { type: 'string' },
    label: { type: 'string' },
    description: { type: 'string' },
    filter: FILTER_SCHEMA,
    sort: { type: 'array', items: SORT_ITEM_SCHEMA },
    columns: { type: 'array', items: { type: 'string' } },
    owner: ownerSchema,
  },
} as const;

export const listViewsSchema = {
  operationId: 'listViews',
  tags: ['views'], security: securityRequired, summary: 'List views',
  response: responses(200, { type: 'array', items: viewOut }, { list: true }),
};

export const getViewSchema = {
  operationId: 'getView',
  tags: ['views'], security: securityRequired, summary: 'Get a view by name',
  params: idParam('name', 'the view name'),
  response: responses(200, viewOut),
};

const declaration = declarationShapeSchema();

export const getSourceSchema = {
  operationId: 'getSource',
  tags: ['sources'], security: securityRequired, summary: 'Get a schema source: last pushed declaration, version, owned objects and views',
  params: idParam('id', 'the schema source id'),
  response: responses(200, {
    type: 'object',
    required: ['id', 'version', 'appliedAt', 'declaration', 'objects', 'views'],
    properties: {
      id: { type: 'string' },
      version: { type: 'integer' },
      appliedAt: { type: ['string', 'null'] },
      declaration,
      objects: { type: 'array', items: { type: 'string' } },
      views: { type: 'array', items: { type: 'string' } },
    },
  }),
};

export const pushSourceSchema = {
  operationId: 'pushSource',
  tags: ['sources'], security: securityRequired,
  summary: 'Push a whole declaration: plan, refuse conflicts and unapproved data loss, apply in one transaction (not rate limited)',
  params: idParam('id', 'the schema source id'),
  headers: {
    type: 'object',
    properties: { 'if-match': { type: 'string', pattern: IF_MATCH_PATTERN, description: 'the source version planned against' } },
  },
  body: {
    type: 'object',
    required: ['declaration'],
    additionalProperties: false,
    properties: {
      declaration,
      dryRun: { type: 'boolean', default: false },
      allowDestructive: {
        anyOf: [{ type: 'boolean' }, { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 400 } }],
      },
    },
  },
  response: responses(200, {
    type: 'object',
    required: ['version', 'applied', 'plan'],
    properties: {
      version: { type: 'integer' },
      applied: { type: 'boolean' },
      plan: {
        type: 'object',
        description: 'steps: [{ action, target, destructive, reason?, affected? }], conflicts: [{ code, target, message }], summary',
        additionalProperties: true,
      },
    },
  }),
};

export const healthSchema = {
  operationId: 'getHealth',
  tags: ['health'], security: [], summary: 'Liveness; no key needed, not rate limited',
  response: responses(200, {
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', const: 'ok' }, version: { type: 'string' } },
  }),
};

export const openapiSchema = {
  operationId: 'getOpenApi',
  tags: ['health'], security: [], summary: 'This OpenAPI 3.1 document (no key needed)',
  response: {
    200: { type: 'object', description: 'The OpenAPI document', additionalProperties: true, properties: { openapi: { type: 'string' } } },
    ...errorResponses,
  },
};
