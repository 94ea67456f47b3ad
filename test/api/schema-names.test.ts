import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// Every bad object or attribute name in a body answers its spec code with the name rule's
// message (engine/model/names.ts), "" and 10,000 characters alike; a path segment naming
// nothing, empty or long, answers the matching NOT_FOUND code, never a code-less 400.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await s.defineObject('deal', [{ name: 'title', type: 'text' }]);
});
afterAll(async () => s.close());

const RULE = 'lowercase letters, digits and underscores, starting with a letter, at most 63 characters';
const long = (n: number) => 'a'.repeat(n);
/** How the message quotes a name: whole up to 80 characters, else cut with its length. */
const shown = (name: string) => (name.length > 80 ? `"${name.slice(0, 60)}…" (${name.length} characters)` : JSON.stringify(name));
const BAD = ['', long(64), long(201), long(10_000)];

describe('names in bodies', () => {
  it('POST /schema/objects: SCHEMA_INVALID_OBJECT_NAME for "", 64, 201 and 10,000 characters', async () => {
    for (const name of BAD) {
      const r = await s.call('POST', '/schema/objects', { body: { name } });
      const message = `Object name ${shown(name)} is malformed: use ${RULE}.`;
      expectError(r, { status: 400, code: 'SCHEMA_INVALID_OBJECT_NAME', message });
      expect(r.body.errors).toEqual([{ path: ['name'], message }]);
    }
  });

  it('POST /schema/objects with a bad attribute name: SCHEMA_INVALID_ATTRIBUTE_NAME at its index', async () => {
    for (const name of BAD) {
      const r = await s.call('POST', '/schema/objects', { body: { name: 'thing', attributes: [{ name, type: 'text' }] } });
      const message = `Attribute name ${shown(name)} is malformed: use ${RULE}.`;
      expectError(r, { status: 400, code: 'SCHEMA_INVALID_ATTRIBUTE_NAME', message });
      expect(r.body.errors).toEqual([{ path: ['attributes', 0, 'name'], message }]);
    }
    expectError(await s.call('GET', '/schema/objects/thing'), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
  });

  it('POST and PUT …/attributes: SCHEMA_INVALID_ATTRIBUTE_NAME; nothing is added or renamed', async () => {
    for (const name of BAD) {
      const message = `Attribute name ${shown(name)} is malformed: use ${RULE}.`;
      expectError(await s.call('POST', '/schema/objects/deal/attributes', { body: { name, type: 'text' } }), {
        status: 400,
        code: 'SCHEMA_INVALID_ATTRIBUTE_NAME',
        message,
      });
      expectError(await s.call('PUT', '/schema/objects/deal/attributes/title', { body: { name } }), {
        status: 400,
        code: 'SCHEMA_INVALID_ATTRIBUTE_NAME',
        message,
      });
    }
    const names = (await s.call('GET', '/schema/objects/deal')).body.data.attributes.map((a: { name: string }) => a.name);
    expect(names.filter((n: string) => !['id', 'object', 'version', 'created_at', 'updated_at', 'created_by'].includes(n))).toEqual(['title']);
  });

  it('a name that is no string at all is a body error like any other type error', async () => {
    const r = await s.call('POST', '/schema/objects', { body: { name: 7 } });
    expectError(r, { status: 400, message: 'Validation failed' });
    expect(r.body.errors).toEqual([{ path: ['name'], message: 'must be string' }]);
  });
});

describe('names in paths: NOT_FOUND, whatever their length', () => {
  it('an empty object or attribute segment', async () => {
    expectError(await s.call('PUT', '/schema/objects//attributes/title', { body: { label: 'x' } }), {
      status: 404,
      code: 'SCHEMA_OBJECT_NOT_FOUND',
      message: 'Object "" does not exist',
    });
    expectError(await s.call('POST', '/schema/objects//attributes', { body: { name: 'x', type: 'text' } }), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
    expectError(await s.call('DELETE', '/schema/objects/'), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
    expectError(await s.call('PUT', '/schema/objects/deal/attributes/', { body: { label: 'x' } }), {
      status: 404,
      code: 'SCHEMA_ATTRIBUTE_NOT_FOUND',
      message: 'Object "deal" has no attribute ""',
    });
    expectError(await s.call('DELETE', '/schema/objects/deal/attributes/'), { status: 404, code: 'SCHEMA_ATTRIBUTE_NOT_FOUND' });
    expectError(await s.call('POST', '/records/', { body: { title: 'x' } }), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
    expectError(await s.call('GET', '/records//00000000-0000-4000-8000-000000000000'), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
    expectError(await s.call('POST', '/records//search', { body: {} }), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
  });

  it('a 100-character object or attribute segment (at the router limit today)', async () => {
    const name = long(100);
    expectError(await s.call('GET', `/schema/objects/${name}`), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
    expectError(await s.call('PUT', `/schema/objects/deal/attributes/${name}`, { body: { label: 'x' } }), { status: 404, code: 'SCHEMA_ATTRIBUTE_NOT_FOUND' });
    expectError(await s.call('POST', `/records/${name}`, { body: { title: 'x' } }), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
  });

  // Fastify's default maxParamLength (100) would stop such segments before any route; the
  // app raises it, so the routes answer NOT_FOUND, cut message included.
  it('a 1,000-character segment reaches the route', async () => {
    const name = long(1000);
    expectError(await s.call('GET', `/schema/objects/${name}`), {
      status: 404,
      code: 'SCHEMA_OBJECT_NOT_FOUND',
      message: `Object ${shown(name)} does not exist`,
    });
    expectError(await s.call('PUT', `/schema/objects/deal/attributes/${name}`, { body: { label: 'x' } }), { status: 404, code: 'SCHEMA_ATTRIBUTE_NOT_FOUND' });
    expectError(await s.call('POST', `/records/${name}`, { body: { title: 'x' } }), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
  });
});
