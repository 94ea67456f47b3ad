import { roleJsonSchema } from '../../declaration/json-schema.js';
import { idParam, ownerSchema, responses, securityRequired } from './common.js';

/** Custom roles (contract.md §3 "Roles, keys, views"); the same fields as a `roles:` declaration (§2). */
const tags = ['roles'];

/** A role's fields as declared (one definition, engine/declaration/json-schema.ts), less the sync-only renamedFrom. */
const { renamedFrom: _r, ...roleFields } = (roleJsonSchema() as { properties: Record<string, object> }).properties;

const roleIn = { type: 'object', required: ['permissions'], additionalProperties: false, properties: roleFields } as const;

const roleOut = {
  type: 'object',
  required: ['name', 'builtIn', 'schema', 'permissions', 'keys'],
  properties: {
    name: { type: 'string' },
    builtIn: { type: 'boolean', description: 'owner, admin, member and viewer are built in and cannot change' },
    ...roleFields,
    keys: { type: 'string', enum: ['manage', 'none'], description: 'whether keys of this role manage keys' },
    owner: ownerSchema,
  },
} as const;

const nameParam = idParam('id', 'the role name');

export const listRolesSchema = {
  operationId: 'listRoles',
  tags, security: securityRequired, summary: 'List the built-in and custom roles',
  response: responses(200, { type: 'array', items: roleOut }, { list: true }),
};

export const getRoleSchema = {
  operationId: 'getRole',
  tags, security: securityRequired, summary: 'Get a role by name', params: nameParam, response: responses(200, roleOut),
};

export const createRoleSchema = {
  operationId: 'createRole',
  tags, security: securityRequired, summary: 'Create a custom role (a runtime role; declared roles come with a source push)',
  body: { ...roleIn, required: ['name', 'permissions'], properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, ...roleFields } },
  response: responses(201, roleOut),
};

export const putRoleSchema = {
  operationId: 'putRole',
  tags, security: securityRequired, summary: "Replace a runtime role's definition (built-in: 403; a source's: 409 SCHEMA_DUPLICATE)",
  params: nameParam, body: roleIn, response: responses(200, roleOut),
};

export const deleteRoleSchema = {
  operationId: 'deleteRole',
  tags, security: securityRequired, summary: 'Delete a runtime role (refused while active keys hold it)',
  params: nameParam,
  response: responses(200, { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }),
};
