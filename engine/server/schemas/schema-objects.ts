import { attributeFieldSchemas } from '../../declaration/json-schema.js';
import { NAME_PATTERN_SOURCE } from '../../model/names.js';
import { withoutRenamedFrom } from '../../model/renames.js';
import type { JsonSchema } from '../../model/types/type-def.js';
import { deletedIdSchema, lookupParams, ownerSchema, responses, securityRequired } from './common.js';

/**
 * A name field. No length bounds here: the store checks every name against the name rule
 * (engine/model/names.ts) and answers its code with the rule's message, "" and 10,000
 * characters alike; the body size limit bounds the input.
 */
const nameField = (what: string) =>
  ({ type: 'string', description: `The ${what} name: ${NAME_PATTERN_SOURCE}, else 400 SCHEMA_INVALID_${what.toUpperCase()}_NAME.` }) as const;

/**
 * AddAttributeInput (contract.md §2): the fields come from the attribute-type registry, as
 * the declaration JSON Schema's do (engine/declaration/json-schema.ts), so a value one
 * accepts the other accepts too. The route shape is the union of every type's fields; which
 * fields apply to which type is checked by the store (engine/store/schema-input.ts, through
 * the same declaration schema), which names the type in its answer. `renamedFrom` is not
 * among them: it is a declaration-file hint for sync, so a runtime body carrying it is
 * refused (400) rather than silently ignored.
 */
const declaredFields = withoutRenamedFrom(attributeFieldSchemas());
const attributeFields: Record<string, JsonSchema> = { name: nameField('attribute'), ...declaredFields };

export const addAttributeInput = {
  type: 'object',
  required: ['name', 'type'],
  additionalProperties: false,
  properties: attributeFields,
};

/** The field schema also taking `null`; `default` (any JSON value) takes it already. */
function orNull(field: object): object {
  if ('anyOf' in field) return { ...field, anyOf: [...(field.anyOf as object[]), { type: 'null' }] };
  if ('type' in field) return { ...field, type: [field.type, 'null'] };
  return field;
}

/** An attribute keeps its name and type: only the other fields can be removed. */
const KEPT = new Set(['name', 'type']);

/**
 * PUT …/attributes/:id: every field optional, at least one; `null` removes the field
 * (loosens a constraint, or drops a field the new type does not take).
 */
export const attributePatchInput = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: Object.fromEntries(
    Object.entries(attributeFields).map(([k, v]) => [
      k,
      KEPT.has(k) ? v : { ...orNull(v), description: `${'description' in v ? `${v.description} ` : ''}null removes it.` },
    ]),
  ),
} as const;

export const storedAttribute = {
  type: 'object',
  required: ['id', 'name', 'type', 'protected', 'system', 'owner'],
  additionalProperties: true,
  properties: {
    id: { type: 'string' },
    ...attributeFields,
    protected: { type: 'boolean' },
    system: { type: 'boolean' },
    owner: ownerSchema,
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
} as const;

export const storedObject = {
  type: 'object',
  required: ['id', 'name', 'owner', 'protected', 'attributes'],
  additionalProperties: true,
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    label: { type: 'string' },
    description: { type: 'string' },
    owner: ownerSchema,
    protected: { type: 'boolean' },
    attributes: { type: 'array', items: storedAttribute },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
} as const;

const objectIdParam = lookupParams({ objectId: "the object's id or name" });
const attributeParams = lookupParams({ objectId: "the object's id or name", id: "the attribute's id or name" });

const tags = ['schema'];
const security = securityRequired;

export const listObjectsSchema = {
  operationId: 'listObjects',
  tags, security, summary: 'List every object with its attributes, owner and protected flags',
  response: responses(200, { type: 'array', items: storedObject }, { list: true }),
};

export const createObjectSchema = {
  operationId: 'createObject',
  tags, security, summary: 'Create a runtime object',
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: {
      name: nameField('object'),
      label: { type: 'string', maxLength: 200 },
      description: { type: 'string', maxLength: 2000 },
      attributes: { type: 'array', maxItems: 500, items: addAttributeInput },
    },
  },
  response: responses(201, storedObject),
};

export const getObjectSchema = {
  operationId: 'getObject',
  tags, security, summary: 'Get one object by id or name',
  params: objectIdParam,
  response: responses(200, storedObject),
};

export const deleteObjectSchema = {
  operationId: 'deleteObject',
  tags, security, summary: 'Delete an object (refuses protected, referenced, and non-empty unless force=true)',
  params: objectIdParam,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { force: { type: 'boolean', default: false } },
  },
  response: responses(200, deletedIdSchema),
};

export const addAttributeSchema = {
  operationId: 'addAttribute',
  tags, security, summary: 'Add a runtime attribute',
  params: objectIdParam,
  body: addAttributeInput,
  response: responses(201, storedAttribute),
};

export const updateAttributeSchema = {
  operationId: 'updateAttribute',
  tags, security, summary: 'Update an attribute (refused when stored data breaks the change)',
  params: attributeParams,
  body: attributePatchInput,
  response: responses(200, storedAttribute),
};

export const deleteAttributeSchema = {
  operationId: 'deleteAttribute',
  tags, security, summary: 'Delete an attribute',
  params: attributeParams,
  response: responses(200, deletedIdSchema),
};
