import { getSourceSchema, pushSourceSchema, runViewSchema } from '../server/schemas/admin.js';
import { searchSchema } from '../server/schemas/search.js';
import { createRecordSchema, getRecordSchema, searchRecordsSchema, updateRecordSchema } from '../server/schemas/records.js';
import { getObjectSchema } from '../server/schemas/schema-objects.js';

/**
 * The tools' input schemas (contract.md §6: "Arguments are validated by each tool's input
 * schema"), assembled from the route schemas that validate the HTTP requests
 * (engine/server/schemas), so a tool accepts exactly what its route accepts and a bad
 * argument gets the route's field messages. Only the names change: a tool takes one flat
 * argument object where a route spreads the same fields over path, header and body.
 */
type JsonSchema = Record<string, unknown>;

interface ObjectSchema {
  properties: Record<string, object>;
}

const prop = (schema: unknown, name: string): object => {
  const found = (schema as ObjectSchema).properties[name];
  if (!found) throw new Error(`route schema has no property "${name}"`);
  return found;
};

const object = (properties: Record<string, object>, required: string[] = []): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties,
  ...(required.length > 0 ? { required } : {}),
});

const described = (schema: object, description: string): object => ({ ...schema, description });

const objectName = described(prop(getRecordSchema.params, 'objectName'), "The object's name (see list_objects).");
const recordId = described(prop(getRecordSchema.params, 'id'), 'The record id (a UUID).');

/**
 * `update_record`'s version: the numeric form of `if-match` (schemas/common.ts IF_MATCH),
 * never `*` — an agent must say which version it read, so a record someone changed since
 * is refused instead of overwritten (contract.md §6).
 */
const version = { type: 'integer', minimum: 1, maximum: 999_999_999_999_999, description: 'The version of the record you read (get_record); a stale one is refused.' };

/** Cross-object search (contract.md §3): the route's own body schema, with the tool's words. */
const globalSearchBody = {
  ...(searchSchema.body.properties as ObjectSchema['properties']),
  query: { ...searchSchema.body.properties.query, minLength: 1, description: 'Words (prefixes match: "acm" finds Acme) or "a quoted phrase".' },
};

export const INPUT_SCHEMAS = {
  list_objects: object({}),
  describe_object: object({ object: described(prop(getObjectSchema.params, 'objectId'), "The object's name (or id).") }, ['object']),
  search_records: object({ object: objectName, ...(searchRecordsSchema.body as ObjectSchema).properties }, ['object']),
  get_record: object({ object: objectName, id: recordId }, ['object', 'id']),
  search: object(globalSearchBody, ['query']),
  run_view: object(
    { view: described(prop(runViewSchema.params, 'name'), 'The view name (see list_objects).'), ...(runViewSchema.querystring as ObjectSchema).properties },
    ['view'],
  ),
  create_record: object({ object: objectName, values: described(createRecordSchema.body, 'Attribute name → value.') }, ['object', 'values']),
  update_record: object(
    { object: objectName, id: recordId, version, values: described(updateRecordSchema.body, 'Only the attributes to change: attribute name → new value.') },
    ['object', 'id', 'version', 'values'],
  ),
  delete_record: object({ object: objectName, id: recordId }, ['object', 'id']),
  plan_sync: object({
    source: described(prop(getSourceSchema.params, 'id'), 'The schema source id (default: the project\'s, from schemasync.yaml).'),
    declaration: described(
      prop(pushSourceSchema.body, 'declaration'),
      "A whole declaration to plan (objects keyed by name with attributes keyed by name, views keyed by name), as in the YAML files. Default: the project's declaration files.",
    ),
  }),
} as const satisfies Record<string, JsonSchema>;

export type ToolName = keyof typeof INPUT_SCHEMAS;
