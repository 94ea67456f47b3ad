import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { attributeFieldSchemas } from '../../engine/declaration/json-schema.js';
import { validateDeclaration } from '../../engine/declaration/validate.js';
import { startTestServer, type TestServer } from './helpers.js';

/**
 * One definition of AddAttributeInput (contract.md §2, issue 13): the runtime routes
 * (POST /schema/objects, POST and PUT …/attributes) and a declaration pushed by sync take
 * the same fields with the same rules, all read from the attribute-type registry.
 */
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await s.defineObject('company', [{ name: 'name', type: 'text' }]);
});
afterAll(() => s.close());

const long = (n: number) => 'x'.repeat(n);

/** Attribute inputs on which the hand-written route schema and the registry used to disagree, and a few refused by both. */
const PROBES: { what: string; attribute: Record<string, unknown> }[] = [
  { what: 'a 300-character label', attribute: { type: 'text', label: long(300) } },
  { what: 'a 2,500-character description', attribute: { type: 'text', description: long(2500) } },
  { what: 'a 1,200-character pattern', attribute: { type: 'text', pattern: `^${long(1200)}$` } },
  { what: 'a 250-character option', attribute: { type: 'select', options: ['a', long(250)] } },
  { what: 'maxLength 0 (nothing could be stored)', attribute: { type: 'text', maxLength: 0 } },
  { what: 'minLength -1', attribute: { type: 'text', minLength: -1 } },
  { what: 'an empty accepts list', attribute: { type: 'document', accepts: [] } },
  { what: 'a malformed MIME type', attribute: { type: 'document', accepts: ['pdf'] } },
  { what: 'maxFileSize "10 MB"', attribute: { type: 'document', maxFileSize: '10 MB' } },
  { what: 'an empty options list', attribute: { type: 'select', options: [] } },
];

describe('the route and sync agree on every probe', () => {
  test.each(PROBES)('$what', async ({ attribute }) => {
    const synced = validateDeclaration({ objects: { probe: { attributes: { a: attribute } } } });
    const syncAccepts = synced.value !== undefined;
    const added = await s.call('POST', '/schema/objects/company/attributes', { body: { name: `a${Math.random().toString(36).slice(2, 8)}`, ...attribute } });
    expect(added.status === 201, JSON.stringify(added.body)).toBe(syncAccepts);
    const created = await s.call('POST', '/schema/objects', {
      body: { name: `o${Math.random().toString(36).slice(2, 8)}`, attributes: [{ name: 'a', ...attribute }] },
    });
    expect(created.status === 201, JSON.stringify(created.body)).toBe(syncAccepts);
  });

  test('a 300-character label: accepted by a push and by POST …/attributes alike', async () => {
    const push = await s.call('PUT', '/schema/sources/crm', {
      body: { declaration: { objects: { deal: { attributes: { title: { type: 'text', label: long(300) } } } } } },
    });
    expect(push.status).toBe(200);
    const added = await s.call('POST', '/schema/objects/deal/attributes', { body: { name: 'note', type: 'text', label: long(300) } });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body.data.label).toHaveLength(300);
  });
});

test('the route bodies in openapi.json are the registry fields, each with the schema the declaration uses', async () => {
  const doc = (await s.call('GET', '/openapi.json', { key: null })).body;
  const add = doc.paths['/schema/objects/{objectId}/attributes'].post.requestBody.content['application/json'].schema;
  const { renamedFrom: _r, ...fields } = attributeFieldSchemas();
  expect(Object.keys(add.properties).sort()).toEqual(['name', ...Object.keys(fields)].sort());
  for (const [name, schema] of Object.entries(fields)) expect(add.properties[name], name).toEqual(schema);
  const inObject = doc.paths['/schema/objects'].post.requestBody.content['application/json'].schema.properties.attributes.items;
  expect(inObject).toEqual(add);
});
