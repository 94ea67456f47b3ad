import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, test } from 'vitest';
import { declarationJsonSchema, projectJsonSchema } from '../../engine/declaration/json-schema.js';
import { ATTRIBUTE_TYPES } from '../../engine/model/attribute.js';
import { loadProjectSync } from '../../engine/declaration/load.js';
import { AJV_OPTIONS } from '../../engine/declaration/ajv.js';

const root = join(import.meta.dirname, '..', '..');
const committed = (name: string) => JSON.parse(readFileSync(join(root, 'schemas', name), 'utf8')) as unknown;

describe('published JSON Schemas', () => {
  // architecture.md pattern 6: the shipped schema cannot drift from the registry.
  test('schemas/*.schema.json equal what the code generates (run `npm run build && npm run schema:write`)', () => {
    expect(committed('declaration.schema.json')).toEqual(declarationJsonSchema());
    expect(committed('project.schema.json')).toEqual(projectJsonSchema());
  });

  test('an editor (plain ajv, no schemasync code) accepts the example and refuses a typo', () => {
    const validate = new Ajv({ strict: false, allErrors: true }).compile(committed('declaration.schema.json') as object);
    for (const f of ['company', 'person', 'deal']) {
      const doc = parse(readFileSync(join(root, 'examples/crm/schema', `${f}.yaml`), 'utf8')) as unknown;
      expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    }
    expect(validate({ objects: { deal: { attributes: { a: { type: 'text', options: ['x'] } } } } })).toBe(false);
    expect(validate({ objects: { deal: { attributes: { a: { type: 'integr' } } } } })).toBe(false);
  });

  test('every type has an if/then branch so editors complete its own fields, and one for a missing or unknown type', () => {
    const attribute = (declarationJsonSchema()['definitions'] as Record<string, { allOf: { if: { properties?: { type: { const: string } } } }[] }>)['attribute']!;
    expect(attribute.allOf.map((b) => b.if.properties?.type.const)).toEqual([...ATTRIBUTE_TYPES, undefined]);
  });
});

test('examples/crm validates clean', () => {
  const r = loadProjectSync({ cwd: join(root, 'examples/crm') });
  expect(r.diagnostics).toEqual([]);
  expect(Object.keys(r.declaration?.objects ?? {}).sort()).toEqual(['company', 'deal', 'person']);
  expect(r.declaration?.objects['deal']?.attributes['contract']?.maxFileSize).toBe(10 * 1024 * 1024);
});

// The CLI runs the validators `npm run build` precompiles from schemas/ (scripts/build-validators.mjs);
// they must report exactly what compiling the code's schema reports, errors included.
test('the built, precompiled validators report the same errors as compiling the schema', () => {
  const built = createRequire(import.meta.url)(join(root, 'dist/engine/declaration/validators.cjs')) as Record<
    'declaration' | 'project',
    ((data: unknown) => boolean) & { errors?: unknown }
  >;
  const ajv = new Ajv(AJV_OPTIONS);
  const fresh = { declaration: ajv.compile(declarationJsonSchema()), project: ajv.compile(projectJsonSchema()) };
  const examples = ['company', 'person', 'deal'].map((f) => parse(readFileSync(join(root, 'examples/crm/schema', `${f}.yaml`), 'utf8')) as unknown);
  const cases: ['declaration' | 'project', unknown][] = [
    ...examples.map((e) => ['declaration', e] as ['declaration', unknown]),
    ['declaration', { objects: { deal: { attributes: { a: { type: 'text', options: ['x'] } } } } }],
    ['declaration', { objects: { deal: { attributes: { a: { type: 'integr' }, b: { type: 'select' }, c: { type: 'text', maxLength: -1 } } } }, extra: 1 }],
    ['declaration', { objects: { Bad: {} }, views: { v: { object: 3 } } }],
    ['project', { source: 'crm', schema: ['a', 2] }],
    ['project', { schema: 'schema', colour: true }],
  ];
  let failures = 0;
  for (const [name, data] of cases) {
    const ok = fresh[name](data);
    expect(built[name](data)).toBe(ok);
    expect(built[name].errors ?? null).toEqual(fresh[name].errors ?? null);
    if (!ok) failures++;
  }
  expect(failures).toBe(5);
});
