import { ATTRIBUTE_TYPES, COMMON_ATTRIBUTE_FIELDS, type AttributeType } from '../model/attribute.js';
import { FILTER_OPS } from '../model/filter.js';
import { NAME_PATTERN_SOURCE, RESERVED_ATTRIBUTE_NAMES, RESERVED_OBJECT_NAMES, SYSTEM_ATTRIBUTES } from '../model/names.js';
import { RECORD_ACTIONS, SCHEMA_ACCESS } from '../model/roles.js';
import { TYPES } from '../model/types/registry.js';
import type { JsonSchema } from '../model/types/type-def.js';

/**
 * The JSON Schema of declaration files and of schemasync.yaml (issue 2: one JSON Schema is
 * the single definition of the format; editors use it through yaml-language-server).
 * Built from the attribute-type registry so a new type or field appears here by itself;
 * `npm run schema:write` writes it to schemas/*.schema.json and a test guards the drift.
 */
export const DECLARATION_SCHEMA_ID = 'https://schemasync.dev/schemas/declaration.schema.json';
export const PROJECT_SCHEMA_ID = 'https://schemasync.dev/schemas/project.schema.json';
export const SOURCE_ID_PATTERN_SOURCE = '^[a-z][a-z0-9_-]{0,62}$';

/** The fields every type takes (COMMON_ATTRIBUTE_FIELDS, engine/model/attribute.ts), each with its schema: no more, no fewer. */
const COMMON_FIELDS: Record<string, JsonSchema> = {
  type: { type: 'string', enum: [...ATTRIBUTE_TYPES], description: 'The attribute type.' },
  label: { type: 'string', description: 'Human-readable name.' },
  description: { type: 'string', description: 'What the attribute holds, for people reading the schema.' },
  required: { type: 'boolean', description: 'Every record must have a value.' },
  unique: { type: 'boolean', description: 'No two records may share a value.' },
  default: { description: 'Value given to new records that omit it; must pass the attribute\u2019s own rules.' },
  renamedFrom: {
    type: 'string',
    description: 'The previous name: sync renames in place and keeps the data.',
  },
} satisfies Record<Exclude<(typeof COMMON_ATTRIBUTE_FIELDS)[number], 'name'>, JsonSchema>;

/** Fields each type allows: the common ones plus the type's own (registry `fields`). */
export function fieldsOfType(type: (typeof ATTRIBUTE_TYPES)[number]): string[] {
  return [...COMMON_ATTRIBUTE_FIELDS.filter((f) => f !== 'name'), ...Object.keys(TYPES[type].fields)];
}

/**
 * Every declarable attribute field with its schema, the union over the types: the flat
 * shape of AddAttributeInput (engine/server/schemas/schema-objects.ts builds the route
 * bodies from it, so a route and a declaration never disagree on a field).
 */
export function attributeFieldSchemas(): Record<string, JsonSchema> {
  const fields: Record<string, JsonSchema> = { ...COMMON_FIELDS };
  for (const t of ATTRIBUTE_TYPES) {
    for (const [name, schema] of Object.entries(TYPES[t].fields)) fields[name] ??= schema;
  }
  return fields;
}

/** One type's fields: the common ones, `type` fixed, `default` a value of the type, its own. */
function fieldsFor(t: AttributeType): Record<string, JsonSchema> {
  return {
    ...COMMON_FIELDS,
    type: { const: t, description: `The attribute type: ${TYPES[t].noun}.` },
    default: { ...TYPES[t].valueSchema, description: COMMON_FIELDS['default']!['description'] },
    ...(TYPES[t].uniqueAllowed ? {} : { unique: { const: false, description: `Not available for ${t} attributes.` } }),
    ...TYPES[t].fields,
  };
}

/**
 * One attribute. The base lists only the fields every type takes; one if/then per type adds
 * that type's own fields and closes the mapping (additionalProperties: false), so an editor
 * (yaml-language-server) completes inside a boolean only what a boolean takes and flags a
 * `minLength` there, and ajv names the field that does not apply. A mapping whose type is
 * missing or unknown gets the union of every field (a typo'd field is still caught).
 */
function attributeSchema(): JsonSchema {
  return {
    type: 'object',
    description: 'An attribute (AddAttributeInput, contract.md \u00a72): its type, then the fields that type takes.',
    required: ['type'],
    properties: COMMON_FIELDS,
    allOf: [
      ...ATTRIBUTE_TYPES.map((t) => ({
        if: { properties: { type: { const: t } }, required: ['type'] },
        then: {
          properties: fieldsFor(t),
          additionalProperties: false,
          ...(TYPES[t].requiredFields?.length ? { required: [...TYPES[t].requiredFields!] } : {}),
        },
      })),
      {
        if: { not: { properties: { type: { enum: [...ATTRIBUTE_TYPES] } }, required: ['type'] } },
        then: { properties: attributeFieldSchemas(), additionalProperties: false },
      },
    ],
  };
}

/** A search or view filter (contract.md §3 "Filter grammar"); its meaning is checked against the object's attributes. */
export const FILTER_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  description: `Conditions: { attr: value } (equality) or { attr: { op: value } } with ops ${FILTER_OPS.join(', ')}; and, or (lists of conditions) and not.`,
};

/** One sort key (contract.md §3). */
export const SORT_ITEM_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['attribute'],
  additionalProperties: false,
  description: 'One sort key.',
  properties: {
    attribute: { type: 'string', description: 'An attribute of the object (or a system attribute such as created_at).' },
    direction: { enum: ['asc', 'desc'], description: 'asc (default) or desc.' },
  },
};

/** Object names a declaration may use: the name rule, minus the framework-native names. */
const OBJECT_NAME: JsonSchema = { pattern: NAME_PATTERN_SOURCE, not: { enum: [...RESERVED_OBJECT_NAMES] } };
/** Attribute names: the name rule, minus the system attributes and the filter combinators. */
const ATTRIBUTE_NAME: JsonSchema = {
  pattern: NAME_PATTERN_SOURCE,
  not: { enum: [...SYSTEM_ATTRIBUTES, ...RESERVED_ATTRIBUTE_NAMES] },
};

function objectSchema(attribute: JsonSchema, names: boolean): JsonSchema {
  return {
    type: 'object',
    description: 'An object: its attributes keyed by name.',
    required: ['attributes'],
    additionalProperties: false,
    properties: {
      label: { type: 'string', description: 'Human-readable name.' },
      description: { type: 'string', description: 'What the object holds, for people reading the schema.' },
      renamedFrom: { type: 'string', description: 'The previous object name: sync renames in place and keeps the records.' },
      attributes: {
        type: 'object',
        description: `Attributes keyed by name (${NAME_PATTERN_SOURCE}; not ${SYSTEM_ATTRIBUTES.join(', ')}, which every object has).`,
        ...(names ? { propertyNames: ATTRIBUTE_NAME } : {}),
        additionalProperties: attribute,
      },
    },
  };
}

/** A view as declared; PUT /views/:name takes the same body (engine/server/schemas/admin.ts). */
export function viewSchema(): JsonSchema {
  return {
    type: 'object',
    description: 'A saved view: an object with a filter, sort and columns.',
    required: ['object'],
    additionalProperties: false,
    properties: {
      object: { type: 'string', description: 'The object this view lists.' },
      label: { type: 'string', description: 'Human-readable name.' },
      description: { type: 'string', description: 'What the view shows.' },
      filter: FILTER_SCHEMA,
      sort: { type: 'array', description: 'Sort keys, first one first.', items: SORT_ITEM_SCHEMA },
      columns: { type: 'array', uniqueItems: true, description: 'The attributes shown, in order.', items: { type: 'string' } },
    },
  };
}

/** A role's fields (contract.md §2 `roles:`); the /roles routes take the same ones (engine/server/schemas/roles.ts). */
export function roleJsonSchema(): JsonSchema {
  return {
    type: 'object',
    required: ['permissions'],
    additionalProperties: false,
    properties: {
      label: { type: 'string', description: 'A name for people.' },
      description: { type: 'string', description: 'What the role is for.' },
      schema: { enum: [...SCHEMA_ACCESS], default: 'none', description: 'What keys of this role may do to the schema: none, read (plan, list objects) or write (sync).' },
      permissions: {
        type: 'array',
        description: 'Record actions per object; "*" is every object.',
        items: {
          type: 'object',
          required: ['object', 'actions'],
          additionalProperties: false,
          properties: {
            object: { type: 'string', description: 'An object name, or "*" for every object.' },
            actions: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...RECORD_ACTIONS] }, description: 'read, create, update, delete' },
          },
        },
      },
      renamedFrom: { type: 'string', description: 'The previous role name: sync renames it in place and its keys keep working.' },
    },
  };
}

export function declarationJsonSchema(): JsonSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: DECLARATION_SCHEMA_ID,
    title: 'schemasync declaration file',
    description: 'Objects, attributes and views of a schemasync source (contract.md \u00a72).',
    type: 'object',
    additionalProperties: false,
    properties: {
      objects: {
        type: 'object',
        description: `Objects keyed by name (${NAME_PATTERN_SOURCE}; not ${RESERVED_OBJECT_NAMES.join(', ')}).`,
        propertyNames: OBJECT_NAME,
        additionalProperties: { $ref: '#/definitions/object' },
      },
      views: {
        type: 'object',
        description: 'Saved views keyed by name.',
        propertyNames: { pattern: NAME_PATTERN_SOURCE },
        additionalProperties: { $ref: '#/definitions/view' },
      },
      roles: {
        type: 'object',
        description: 'Custom roles keyed by name, pushed with the objects and views in one transaction (owner, admin, member and viewer are built in).',
        propertyNames: { pattern: NAME_PATTERN_SOURCE },
        additionalProperties: { $ref: '#/definitions/role' },
      },
    },
    definitions: {
      object: objectSchema({ $ref: '#/definitions/attribute' }, true),
      attribute: attributeSchema(),
      role: roleJsonSchema(),
      view: viewSchema(),
    },
  };
}

/**
 * The shape of a declaration as the body of PUT /schema/sources/:id and the answer of GET:
 * no $refs (route schemas are compiled on their own) and flat attributes (the union of every
 * type's fields), so a generated client gets real types. The route validates the
 * declaration itself first (validateDeclaration, the per-type schema above plus the rules)
 * and answers with the spec's codes; this shape is never stricter than that.
 */
export function declarationShapeSchema(): JsonSchema {
  return {
    type: 'object',
    description: 'The declaration, shaped like the YAML (contract.md \u00a72): objects keyed by name (attributes keyed by name), views and roles keyed by name.',
    additionalProperties: false,
    properties: {
      objects: {
        type: 'object',
        description: 'Objects keyed by name.',
        additionalProperties: objectSchema({ type: 'object', additionalProperties: false, required: ['type'], properties: attributeFieldSchemas() }, false),
      },
      views: { type: 'object', description: 'Saved views keyed by name.', additionalProperties: viewSchema() },
      roles: { type: 'object', description: 'Custom roles keyed by name.', additionalProperties: roleJsonSchema() },
    },
  };
}

export function projectJsonSchema(): JsonSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: PROJECT_SCHEMA_ID,
    title: 'schemasync.yaml',
    description: 'The schemasync project file (contract.md \u00a72).',
    type: 'object',
    required: ['source'],
    additionalProperties: false,
    properties: {
      source: {
        type: 'string',
        pattern: SOURCE_ID_PATTERN_SOURCE,
        description: 'Schema source id: the declaration is pushed to PUT /v1/schema/sources/<source>.',
      },
      schema: {
        anyOf: [
          { type: 'string', minLength: 1 },
          { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
        ],
        description: 'A folder (every *.yaml/*.yml below it) or a list of globs, relative to this file. Default: schema',
      },
      baseUrl: { type: 'string', pattern: '^https?://', description: 'Default instance, e.g. http://127.0.0.1:4400/v1' },
      targets: {
        type: 'object',
        description: 'Named instances, each with its own policy (contract.md \u00a77); pick one with --target or SCHEMASYNC_TARGET.',
        propertyNames: { pattern: TARGET_NAME_PATTERN },
        additionalProperties: targetSchema(),
      },
    },
  };
}

/** Target names: what a person types after --target (letters, digits, - and _). */
export const TARGET_NAME_PATTERN = '^[A-Za-z][A-Za-z0-9_-]{0,62}$';
/** The fields of one target (contract.md \u00a72, \u00a77); ajv-messages suggests among them. */
export const TARGET_FIELDS = ['baseUrl', 'apiKeyEnv', 'allowDestructive', 'protect', 'requireSavedPlan', 'watch'] as const;

function targetSchema(): JsonSchema {
  const props: Record<(typeof TARGET_FIELDS)[number], JsonSchema> = {
    baseUrl: { type: 'string', pattern: '^https?://', description: 'The instance, e.g. https://api.example.com/v1' },
    apiKeyEnv: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'Environment variable holding this target\'s API key (never the key itself)' },
    allowDestructive: {
      anyOf: [{ type: 'boolean' }, { type: 'array', items: { type: 'string', minLength: 1 } }],
      description: 'Losses this target approves without a flag: true (all) or a list of targets (deal.amount, legacy)',
    },
    protect: {
      type: 'array',
      uniqueItems: true,
      items: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,62}(\\.[a-z][a-z0-9_]{0,62})?$' },
      description: 'Objects and attributes (deal.amount) never dropped or changed destructively here, even with --allow-destructive',
    },
    requireSavedPlan: { type: 'boolean', description: 'sync only with --plan (a reviewed plan)' },
    watch: { type: 'boolean', description: 'Allow watch/dev against this target (default: true only for loopback URLs)' },
  };
  return { type: 'object', additionalProperties: false, required: ['baseUrl'], properties: props };
}
