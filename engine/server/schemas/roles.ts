import { RECORD_ACTIONS, SCHEMA_ACCESS } from '../../model/roles.js';
import { idParam, ownerSchema, responses, securityRequired } from './common.js';

/** Custom roles (contract.md §3 "Roles, keys, views"); the same fields as a `roles:` declaration (§2). */
const tags = ['roles'];

export const permissionSchema = {
  type: 'object',
  required: ['object', 'actions'],
  additionalProperties: false,
  properties: {
    object: { type: 'string', minLength: 1, maxLength: 63, description: 'an object name, or "*" for every object' },
    actions: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: [...RECORD_ACTIONS] } },
  },
} as const;

const roleFields = {
  label: { type: 'string', maxLength: 200 },
  description: { type: 'string', maxLength: 2000 },
  schema: { type: 'string', enum: [...SCHEMA_ACCESS], default: 'none', description: 'what the role may do to the schema' },
  permissions: { type: 'array', maxItems: 500, items: permissionSchema, description: 'record actions per object' },
} as const;

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
  tags, security: securityRequired, summary: 'List the built-in and custom roles',
  response: responses(200, { type: 'array', items: roleOut }, { list: true }),
};

export const getRoleSchema = {
  tags, security: securityRequired, summary: 'Get a role by name', params: nameParam, response: responses(200, roleOut),
};

export const createRoleSchema = {
  tags, security: securityRequired, summary: 'Create a custom role (a runtime role; declared roles come with a source push)',
  body: { ...roleIn, required: ['name', 'permissions'], properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, ...roleFields } },
  response: responses(201, roleOut),
};

export const putRoleSchema = {
  tags, security: securityRequired, summary: "Replace a runtime role's definition (built-in: 403; a source's: 409 SCHEMA_DUPLICATE)",
  params: nameParam, body: roleIn, response: responses(200, roleOut),
};

export const deleteRoleSchema = {
  tags, security: securityRequired, summary: 'Delete a runtime role (refused while active keys hold it)',
  params: nameParam,
  response: responses(200, { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }),
};
