import { ATTRIBUTE_TYPES } from '../../model/attribute.js';
import { NAME_PATTERN_SOURCE } from '../../model/names.js';
import { SIZE_PATTERN_SOURCE } from '../../model/sizes.js';
import { deletedIdSchema, lookupParams, ownerSchema, responses, securityRequired } from './common.js';

/**
 * A name field. No length bounds here: the store checks every name against the name rule
 * (engine/model/names.ts) and answers its code with the rule's message, "" and 10,000
 * characters alike; the body size limit bounds the input.
 */
const nameField = (what: string) =>
  ({ type: 'string', description: `The ${what} name: ${NAME_PATTERN_SOURCE}, else 400 SCHEMA_INVALID_${what.toUpperCase()}_NAME.` }) as const;

/**
 * AddAttributeInput (contract.md §2), field by field. `renamedFrom` is not among them: it
 * is a declaration-file hint for sync, so a runtime body carrying it is refused (400)
 * rather than silently ignored.
 */
const attributeFields = {
  name: nameField('attribute'),
  type: { type: 'string', enum: [...ATTRIBUTE_TYPES] },
  label: { type: 'string', maxLength: 200 },
  description: { type: 'string', maxLength: 2000 },
  required: { type: 'boolean' },
  unique: { type: 'boolean' },
  default: { description: 'Any JSON value valid for the type.' },
  min: { type: 'number' },
  max: { type: 'number' },
  minLength: { type: 'integer', minimum: 0 },
  maxLength: { type: 'integer', minimum: 0 },
  pattern: { type: 'string', maxLength: 1000 },
  options: { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 200 } },
  target: { type: 'string', minLength: 1, maxLength: 200 },
  multiple: { type: 'boolean' },
  accepts: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 200 } },
  maxFileSize: {
    description: 'Bytes, or a size such as "10MB".',
    anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', pattern: SIZE_PATTERN_SOURCE }],
  },
} as const;

export const addAttributeInput = {
  type: 'object',
  required: ['name', 'type'],
  additionalProperties: false,
  properties: attributeFields,
} as const;

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
  tags, security, summary: 'List every object with its attributes, owner and protected flags',
  response: responses(200, { type: 'array', items: storedObject }, { list: true }),
};

export const createObjectSchema = {
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
  tags, security, summary: 'Get one object by id or name',
  params: objectIdParam,
  response: responses(200, storedObject),
};

export const deleteObjectSchema = {
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
  tags, security, summary: 'Add a runtime attribute',
  params: objectIdParam,
  body: addAttributeInput,
  response: responses(201, storedAttribute),
};

export const updateAttributeSchema = {
  tags, security, summary: 'Update an attribute (refused when stored data breaks the change)',
  params: attributeParams,
  body: attributePatchInput,
  response: responses(200, storedAttribute),
};

export const deleteAttributeSchema = {
  tags, security, summary: 'Delete an attribute',
  params: attributeParams,
  response: responses(200, deletedIdSchema),
};
