import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaClient } from '../../engine/sdk/index.js';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// PUT /schema/objects/:objectId/attributes/:id (contract.md §3 "Schema"): `null` removes a
// field, a type change must remove what the new type does not take, and `renamedFrom`
// (a declaration-file hint for sync) is refused by the runtime routes.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await s.defineObject('pact', [
    { name: 'title', type: 'text', maxLength: 5, default: 'abc' },
    { name: 'stage', type: 'select', options: ['lead', 'won'] },
    { name: 'score', type: 'number', min: 1, max: 5 },
    { name: 'size', type: 'integer', min: 0 },
  ]);
});
afterAll(async () => s.close());

const put = (attribute: string, body: unknown) => s.call('PUT', `/schema/objects/pact/attributes/${attribute}`, { body });
const attr = async (name: string) =>
  (await s.call('GET', '/schema/objects/pact')).body.data.attributes.find((a: { name: string }) => a.name === name);

describe('null removes a field', () => {
  it('{ maxLength: null } loosens the constraint: 200, gone when read back, a longer value is then taken', async () => {
    expectError(await s.call('POST', '/records/pact', { body: { title: 'too long' } }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED' });
    const r = await put('title', { maxLength: null });
    expect(r.status).toBe(200);
    expect(r.body.data).not.toHaveProperty('maxLength');
    const back = await attr('title');
    expect(back).toMatchObject({ name: 'title', type: 'text', default: 'abc' });
    expect(back).not.toHaveProperty('maxLength');
    expect((await s.call('POST', '/records/pact', { body: { title: 'now long enough' } })).status).toBe(201);
  });

  it('{ default: null } removes the default (not stored as a null default)', async () => {
    expect((await put('title', { default: null })).status).toBe(200);
    expect(await attr('title')).not.toHaveProperty('default');
  });

  it('a change stored data breaks is still refused, nulls or not', async () => {
    // 'now long enough' (15 characters) is stored: maxLength 5 again cannot be applied.
    const r = await put('title', { maxLength: 5, default: null });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(r.body.message).toMatch(/maxLength/);
    expect(await attr('title')).not.toHaveProperty('maxLength');
  });

  it('a field the type requires cannot be removed: { options: null } on a select', async () => {
    const r = await put('stage', { options: null });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: 'Attribute "stage" is a select and needs "options", the list of allowed values' });
    expect((await attr('stage')).options).toEqual(['lead', 'won']);
  });

  it('name and type cannot be removed: null for them is a body error; a wrong type says "or null"', async () => {
    const name = await put('stage', { name: null });
    expectError(name, { status: 400, message: 'Validation failed' });
    expect(name.body.errors).toEqual([{ path: ['name'], message: 'must be string' }]);
    const type = await put('stage', { type: null });
    expectError(type, { status: 400, message: 'Validation failed' });
    expect(type.body.errors[0]).toEqual({ path: ['type'], message: 'must be string' });
    const wrong = await put('title', { maxLength: '5' });
    expectError(wrong, { status: 400, message: 'Validation failed' });
    expect(wrong.body.errors).toEqual([{ path: ['maxLength'], message: 'must be integer or null' }]);
    expect(await attr('stage')).toMatchObject({ name: 'stage', type: 'select' });
  });
});

describe('type changes away from fields the new type does not take', () => {
  it('select → text without removing options: 400 saying to send "options": null; nothing changes', async () => {
    const record = (await s.call('POST', '/records/pact', { body: { stage: 'won' } })).body.data;
    const r = await put('stage', { type: 'text' });
    expectError(r, {
      status: 400,
      code: 'SCHEMA_VALIDATION_FAILED',
      message: 'Attribute "stage": "options" does not apply to a text attribute: send "options": null to remove it',
    });
    expect(r.body.errors).toEqual([{ path: ['options'], message: 'does not apply to a text attribute: send "options": null to remove it' }]);
    expect(await attr('stage')).toMatchObject({ type: 'select', options: ['lead', 'won'] });

    const ok = await put('stage', { type: 'text', options: null });
    expect(ok.status).toBe(200);
    const back = await attr('stage');
    expect(back).toMatchObject({ name: 'stage', type: 'text' });
    expect(back).not.toHaveProperty('options');
    expect((await s.call('GET', `/records/pact/${record.id}`)).body.data.values.stage).toBe('won');
  });

  it('number with min and max → text names both fields', async () => {
    const r = await put('score', { type: 'text' });
    expectError(r, {
      status: 400,
      code: 'SCHEMA_VALIDATION_FAILED',
      message: 'Attribute "score": "min", "max" do not apply to a text attribute: send "min": null, "max": null to remove them',
    });
    expect(r.body.errors.map((e: { path: string[] }) => e.path)).toEqual([['min'], ['max']]);
    expect((await put('score', { type: 'text', min: null, max: null })).status).toBe(200);
    const back = await attr('score');
    expect(back.type).toBe('text');
    expect(back).not.toHaveProperty('min');
    expect(back).not.toHaveProperty('max');
  });

  it('a type change stored data breaks is still refused after the nulls', async () => {
    // stage holds "won", which is no integer.
    const r = await put('stage', { type: 'integer' });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED' });
    expect((await attr('stage')).type).toBe('text');
  });
});

describe('renamedFrom is refused by the runtime routes (a declaration-file hint for sync)', () => {
  it('POST …/attributes, PUT …/attributes/:id and POST /schema/objects answer 400 naming the field; nothing is written', async () => {
    const add = await s.call('POST', '/schema/objects/pact/attributes', { body: { name: 'heading', type: 'text', renamedFrom: 'title' } });
    expectError(add, { status: 400, message: 'Validation failed' });
    expect(add.body.errors).toEqual([{ path: ['renamedFrom'], message: 'is not an allowed field' }]);
    expect(await attr('heading')).toBeUndefined();

    const upd = await put('title', { label: 'Heading', renamedFrom: 'old_title' });
    expectError(upd, { status: 400, message: 'Validation failed' });
    expect(upd.body.errors).toEqual([{ path: ['renamedFrom'], message: 'is not an allowed field' }]);
    expect(await attr('title')).not.toHaveProperty('label');

    const obj = await s.call('POST', '/schema/objects', { body: { name: 'other', attributes: [{ name: 'a', type: 'text', renamedFrom: 'b' }] } });
    expectError(obj, { status: 400, message: 'Validation failed' });
    expect(obj.body.errors).toEqual([{ path: ['attributes', 0, 'renamedFrom'], message: 'is not an allowed field' }]);
    expectError(await s.call('GET', '/schema/objects/other'), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
  });
});

describe('the same body through the SDK and in openapi.json', () => {
  it('SchemaClient.schema.updateAttribute sends the nulls', async () => {
    const client = new SchemaClient({ baseUrl: s.base, apiKey: s.ownerKey });
    const updated = await client.schema.updateAttribute('pact', 'size', { min: null, label: 'Size' });
    expect(updated).toMatchObject({ name: 'size', type: 'integer', label: 'Size' });
    expect(await attr('size')).not.toHaveProperty('min');
  });

  it('the PUT body shows every field but name and type as nullable; no body lists renamedFrom', async () => {
    const doc = (await s.call('GET', '/openapi.json', { key: null })).body;
    const path = doc.paths['/schema/objects/{objectId}/attributes/{id}'];
    const patch = path.put.requestBody.content['application/json'].schema.properties;
    expect(patch.maxLength.type).toEqual(['integer', 'null']);
    expect(patch.options.type).toEqual(['array', 'null']);
    expect(patch.maxFileSize.anyOf).toContainEqual({ type: 'null' });
    expect(patch.name.type).toBe('string');
    expect(patch.type.type).toBe('string');
    expect(patch).not.toHaveProperty('renamedFrom');
    const add = doc.paths['/schema/objects/{objectId}/attributes'].post.requestBody.content['application/json'].schema.properties;
    expect(add.maxLength.type).toBe('integer');
    expect(add).not.toHaveProperty('renamedFrom');
  });
});

describe('an added attribute with a default fills records by the one backfill rule', () => {
  it('POST …/attributes with a default: every record takes it and moves one version, its etag too', async () => {
    await s.defineObject('tally', [{ name: 'name', type: 'text' }]);
    const a = (await s.call('POST', '/records/tally', { body: { name: 'a' } })).body.data;
    const added = await s.call('POST', '/schema/objects/tally/attributes', { body: { name: 'count', type: 'integer', default: 7 } });
    expect(added.status).toBe(201);
    const got = await s.call('GET', `/records/tally/${a.id}`);
    expect(got.body.data.values).toEqual({ name: 'a', count: 7 });
    expect(got.body.data.version).toBe(2);
    expect(got.headers.get('etag')).toBe('"2"');
    // The version read before the fill no longer matches: the client sees the new value first.
    expectError(await s.call('PUT', `/records/tally/${a.id}`, { body: { name: 'b' }, headers: { 'if-match': '"1"' } }), { status: 409, code: 'SCHEMA_CONFLICT' });
  });
});
