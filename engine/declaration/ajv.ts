import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, Options } from 'ajv';
import { declarationJsonSchema, projectJsonSchema } from './json-schema.js';
import type { JsonSchema } from '../model/types/type-def.js';

/**
 * The JSON Schemas compiled once, on first use (the CLI must start fast: nothing is
 * compiled at import time). allErrors: a run reports every problem, not the first.
 * The build (scripts/build-validators.mjs) also compiles the declaration and project
 * schemas ahead of time from schemas/*.schema.json with these options: `validate` then
 * neither loads ajv nor compiles (~100 ms of a 1,000-object run). Without that file
 * (tests run from the sources) they are compiled here, to the same checks.
 */
export const AJV_OPTIONS: Options = { allErrors: true, strict: false, allowUnionTypes: true };
/** Written next to this module by the build; the names are the SchemaName keys. */
export const PRECOMPILED_FILE = './validators.cjs';

type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
const require = createRequire(import.meta.url);
let ajv: Ajv | undefined;
let precompiled: Partial<Record<SchemaName, Validator>> | undefined;
const compiled = new Map<SchemaName, Validator>();

function loadPrecompiled(): Partial<Record<SchemaName, Validator>> {
  try {
    return require(PRECOMPILED_FILE) as Partial<Record<SchemaName, Validator>>;
  } catch {
    return {};
  }
}

function attributeInputSchema(partial: boolean): JsonSchema {
  const decl = declarationJsonSchema();
  const definitions = decl['definitions'] as Record<string, JsonSchema>;
  const attribute = structuredClone(definitions['attribute']!) as Record<string, unknown>;
  // AddAttributeInput carries its own name; the key of a YAML mapping does not.
  (attribute['properties'] as Record<string, unknown>)['name'] = { type: 'string' };
  for (const branch of attribute['allOf'] as { then: { properties: Record<string, unknown>; required?: string[] } }[]) {
    branch.then.properties['name'] = { type: 'string' };
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
    precompiled ??= loadPrecompiled();
    validate = precompiled[name];
    if (!validate) {
      // Loaded only here: a CLI run with the precompiled file never loads ajv at all.
      ajv ??= new (require('ajv') as { Ajv: new (o: Options) => Ajv }).Ajv(AJV_OPTIONS);
      validate = ajv.compile(SCHEMAS[name]()) as Validator;
    }
    compiled.set(name, validate);
  }
  return validate(data) ? [] : (validate.errors ?? []);
}
