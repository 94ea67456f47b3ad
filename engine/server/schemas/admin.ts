import { FILTER_SCHEMA, SORT_ITEM_SCHEMA, declarationShapeSchema, viewSchema } from '../../declaration/json-schema.js';
import { PLAN_HASH_PATTERN } from '../../plan/hash.js';
import type { PushAnswer, PushRequest } from '../../plan/push.js';
import { DEFAULT_PAGE, MAX_PAGE } from '../../model/limits.js';
import { SCOPES } from '../../store/types.js';
import { IF_MATCH_PATTERN, deletedIdSchema, errorResponse, errorResponses, idParam, ownerSchema, responses, securityRequired } from './common.js';
import { recordOut, searchRecordsSchema } from './records.js';

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

export const keySelfSchema = {
  operationId: 'getOwnKey',
  tags: ['keys'], security: securityRequired,
  summary: 'The calling key: id, name, role, scopes and the actions it may take (any key may ask; never a secret)',
  response: responses(200, {
    type: 'object',
    required: ['id', 'name', 'role', 'scopes', 'actions'],
    properties: {
      id: keyOut.properties.id,
      name: keyOut.properties.name,
      role: keyOut.properties.role,
      scopes,
      actions: {
        type: 'array',
        items: { type: 'string', enum: [...SCOPES] },
        description: 'What both the role and the scopes allow (contract.md §3: "A key may do what both its role and its scopes allow")',
      },
    },
  }),
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

/** The body of PUT /views/:name: a view exactly as declared (one definition, engine/declaration/json-schema.ts). */
const viewIn = viewSchema();

export const putViewSchema = {
  operationId: 'putView',
  tags: ['views'], security: securityRequired,
  summary: 'Create or replace a runtime view (a view a source pushed answers 409 SCHEMA_DUPLICATE)',
  params: idParam('name', 'the view name'),
  body: viewIn,
  response: responses(200, viewOut),
};

export const deleteViewSchema = {
  operationId: 'deleteView',
  tags: ['views'], security: securityRequired,
  summary: 'Delete a runtime view (a view a source pushed answers 409 SCHEMA_DUPLICATE)',
  params: idParam('name', 'the view name'),
  response: responses(200, { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }),
};

export const runViewSchema = {
  operationId: 'runView',
  tags: ['views'], security: securityRequired,
  summary: "Run a view: its filter and sort, keyset pages, only its columns in each record's values",
  params: idParam('name', 'the view name'),
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: searchRecordsSchema.body.properties.limit,
      cursor: searchRecordsSchema.body.properties.cursor,
    },
  },
  response: responses(200, { type: 'array', items: recordOut }, { list: true }),
};

const declaration = declarationShapeSchema();

export const getSourceSchema = {
  operationId: 'getSource',
  tags: ['sources'], security: securityRequired, summary: 'Get a schema source: last pushed declaration, version, owned objects and views',
  params: idParam('id', 'the schema source id'),
  response: responses(200, {
    type: 'object',
    required: ['id', 'version', 'appliedAt', 'declaration', 'objects', 'views', 'roles'],
    properties: {
      id: { type: 'string' },
      version: { type: 'integer' },
      appliedAt: { type: ['string', 'null'] },
      declaration,
      objects: { type: 'array', items: { type: 'string' } },
      views: { type: 'array', items: { type: 'string' } },
      roles: { type: 'array', items: { type: 'string' } },
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
      expectPlan: { type: 'string', pattern: PLAN_HASH_PATTERN, description: 'the planHash a reviewer saw: apply only if the plan is still that one (else 409)' },
      // one entry per field of the wire type the SDK sends (engine/plan/push.ts), no more, no fewer
    } satisfies Record<keyof PushRequest, object>,
  },
  response: responses(200, {
    type: 'object',
    required: ['version', 'applied', 'plan'] satisfies (keyof PushAnswer)[],
    properties: {
      version: { type: 'integer' },
      applied: { type: 'boolean' },
      plan: {
        type: 'object',
        description: 'steps: [{ action, target, destructive, reason?, affected? }], conflicts: [{ code, target, message }], summary, planHash',
        additionalProperties: true,
      },
    } satisfies Record<keyof PushAnswer, object>,
  }),
};

const historyEntry = {
  type: 'object',
  required: ['version', 'appliedAt', 'planHash', 'key', 'steps', 'destructive'],
  properties: {
    version: { type: 'integer' },
    appliedAt: { type: 'string' },
    planHash: { type: 'string' },
    key: { anyOf: [{ type: 'null' }, { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } }] },
    steps: {
      type: 'object',
      required: ['create', 'change', 'drop'],
      properties: { create: { type: 'integer' }, change: { type: 'integer' }, drop: { type: 'integer' } },
    },
    destructive: { type: 'array', items: { type: 'string' } },
  },
} as const;

export const sourceHistorySchema = {
  operationId: 'getSourceHistory',
  tags: ['sources'], security: securityRequired, summary: 'The pushes that changed a source, newest first (keyset pagination)',
  params: idParam('id', 'the schema source id'),
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE }, cursor: { type: 'string', maxLength: 40 } },
  },
  response: responses(200, { type: 'array', items: historyEntry }, { list: true }),
};

const notWired = {
  // What a deployment with an agent wired answers; this server never does (always the 503).
  200: { type: 'object', additionalProperties: true, description: "The agent's answer, on a deployment that has an agent wired" },
  ...errorResponses,
  503: { ...errorResponse, description: 'CONFIGURATION_REQUIRED: no agent is wired on this deployment (permanent; do not retry)' },
};

export const agentChatSchema = {
  operationId: 'agentChat',
  tags: ['agent'], security: securityRequired,
  summary: 'Agent chat (AI rate bucket). The local server has no agent wired: always 503 CONFIGURATION_REQUIRED',
  body: { type: 'object', additionalProperties: true, description: 'The chat request; not read while no agent is wired.' },
  response: notWired,
};

export const agentStreamSchema = {
  operationId: 'agentStream',
  tags: ['agent'], security: securityRequired,
  summary: 'Agent streaming (AI rate bucket). The local server has no agent wired: always 503 CONFIGURATION_REQUIRED',
  response: notWired,
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
