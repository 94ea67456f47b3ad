import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { declarationJsonSchema, projectJsonSchema } from './json-schema.js';
import type { JsonSchema } from '../model/types/type-def.js';

/**
 * The JSON Schemas compiled once, on first use (the CLI must start fast: nothing is
 * compiled at import time). allErrors: a run reports every problem, not the first.
 */
let ajv: Ajv | undefined;
const compiled = new Map<SchemaName, ValidateFunction>();

function attributeInputSchema(partial: boolean): JsonSchema {
  const decl = declarationJsonSchema();
  const definitions = decl['definitions'] as Record<string, JsonSchema>;
  const attribute = structuredClone(definitions['attribute']!) as Record<string, unknown>;
  // AddAttributeInput carries its own name; the key of a YAML mapping does not.
  (attribute['properties'] as Record<string, unknown>)['name'] = { type: 'string' };
  for (const branch of attribute['allOf'] as { then: { propertyNames: { enum: string[] }; required?: string[] } }[]) {
    branch.then.propertyNames.enum.push('name');
    if (partial) delete branch.then.required;
  }
  if (partial) delete attribute['required'];
  return attribute;
}

export type SchemaName = 'declaration' | 'project' | 'attribute' | 'attributePatch';

// Each schema is compiled the first time it is needed: `validate` never pays for the
// attribute-input schemas the server's routes use, nor the server for the project file.
const SCHEMAS: Record<SchemaName, () => JsonSchema> = {
  declaration: declarationJsonSchema,
  project: projectJsonSchema,
  attribute: () => attributeInputSchema(false),
  attributePatch: () => attributeInputSchema(true),
};

/** Run one compiled schema: the raw ajv errors (translated by ajv-messages.ts), none when valid. */
export function runSchema(name: SchemaName, data: unknown): ErrorObject[] {
  let validate = compiled.get(name);
  if (!validate) {
    ajv ??= new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
    validate = ajv.compile(SCHEMAS[name]());
    compiled.set(name, validate);
  }
  return validate(data) ? [] : (validate.errors ?? []);
}
