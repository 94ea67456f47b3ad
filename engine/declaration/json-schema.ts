import { ATTRIBUTE_TYPES, COMMON_ATTRIBUTE_FIELDS } from '../model/attribute.js';
import { FILTER_OPS } from '../model/filter.js';
import { NAME_PATTERN_SOURCE } from '../model/names.js';
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

const COMMON_FIELDS: Record<string, JsonSchema> = {
  type: { enum: [...ATTRIBUTE_TYPES], description: 'The attribute type.' },
  label: { type: 'string', description: 'Human-readable name.' },
  description: { type: 'string' },
  required: { type: 'boolean', description: 'Every record must have a value.' },
  unique: { type: 'boolean', description: 'No two records may share a value.' },
  default: { description: 'Value given to new records that omit it; must pass the attribute\u2019s own rules.' },
  renamedFrom: {
    type: 'string',
    description: 'The previous name: sync renames in place and keeps the data.',
  },
};

/** Fields each type allows: the common ones plus the type's own (registry `fields`). */
export function fieldsOfType(type: (typeof ATTRIBUTE_TYPES)[number]): string[] {
  return [...COMMON_ATTRIBUTE_FIELDS.filter((f) => f !== 'name'), ...Object.keys(TYPES[type].fields)];
}

/** Every declarable attribute field with its schema (a union over the types). */
function allAttributeFields(): Record<string, JsonSchema> {
  const fields: Record<string, JsonSchema> = { ...COMMON_FIELDS };
  for (const t of ATTRIBUTE_TYPES) {
    for (const [name, schema] of Object.entries(TYPES[t].fields)) fields[name] ??= schema;
  }
  return fields;
}

function attributeSchema(): JsonSchema {
  return {
    type: 'object',
    required: ['type'],
    properties: allAttributeFields(),
    additionalProperties: false,
    // One if/then per type: editors complete the type's own fields, and a field of
    // another type (options on a text) is refused with the type named.
    allOf: ATTRIBUTE_TYPES.map((t) => ({
      if: { properties: { type: { const: t } }, required: ['type'] },
      then: {
        properties: { ...COMMON_FIELDS, ...TYPES[t].fields },
        propertyNames: { enum: fieldsOfType(t) },
        ...(TYPES[t].requiredFields?.length ? { required: [...TYPES[t].requiredFields!] } : {}),
      },
    })),
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
        description: 'Objects keyed by name.',
        propertyNames: { pattern: NAME_PATTERN_SOURCE },
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
      object: {
        type: 'object',
        required: ['attributes'],
        additionalProperties: false,
        properties: {
          label: { type: 'string' },
          description: { type: 'string' },
          renamedFrom: { type: 'string', description: 'The previous object name: sync renames in place and keeps the records.' },
          attributes: {
            type: 'object',
            description: 'Attributes keyed by name.',
            propertyNames: { pattern: NAME_PATTERN_SOURCE },
            additionalProperties: { $ref: '#/definitions/attribute' },
          },
        },
      },
      attribute: attributeSchema(),
      role: roleJsonSchema(),
      view: {
        type: 'object',
        required: ['object'],
        additionalProperties: false,
        properties: {
          object: { type: 'string', description: 'The object this view lists.' },
          label: { type: 'string' },
          description: { type: 'string' },
          filter: { type: 'object', description: `Conditions: { attr: value } or { attr: { op: value } }; ops ${FILTER_OPS.join(', ')}; and, or, not.` },
          sort: {
            type: 'array',
            items: {
              type: 'object',
              required: ['attribute'],
              additionalProperties: false,
              properties: { attribute: { type: 'string' }, direction: { enum: ['asc', 'desc'] } },
            },
          },
          columns: { type: 'array', uniqueItems: true, items: { type: 'string' } },
        },
      },
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
