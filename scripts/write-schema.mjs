#!/usr/bin/env node
// `npm run schema:write`: writes schemas/declaration.schema.json and
// schemas/project.schema.json from the built code (engine/declaration/json-schema.ts),
// so the published schemas are generated from the attribute-type registry, never edited
// by hand. test/unit/declaration-schema.test.ts fails when they drift.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { declarationJsonSchema, projectJsonSchema } = await import(join(root, 'dist/engine/declaration/json-schema.js'));
mkdirSync(join(root, 'schemas'), { recursive: true });
for (const [name, schema] of [
  ['declaration.schema.json', declarationJsonSchema()],
  ['project.schema.json', projectJsonSchema()],
]) {
  writeFileSync(join(root, 'schemas', name), `${JSON.stringify(schema, null, 2)}\n`);
  process.stdout.write(`wrote schemas/${name}\n`);
}
