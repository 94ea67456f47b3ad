import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORBIDDEN_MESSAGE } from '../../engine/errors.js';
import { failingCreate } from './failing-store.js';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// The app shell over real HTTP: envelope, request ids, auth, permissions, body parsing,
// openapi, over the real store (empty: no objects).
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ wrap: failingCreate, bodyLimit: 64 * 1024 });
});
afterAll(async () => s.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('envelope and request ids', () => {
  it('health is open and answers the success envelope with a request id', async () => {
    const r = await s.call('GET', '/health', { key: null });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { status: 'ok', version: expect.any(String) } });
    expect(r.headers.get('x-request-id')).toMatch(UUID);
  });

  it('echoes a valid client UUID and replaces anything else', async () => {
    const mine = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    const a = await s.call('GET', '/health', { headers: { 'x-request-id': mine } });
    expect(a.headers.get('x-request-id')).toBe(mine);
    const b = await s.call('GET', '/health', { headers: { 'x-request-id': 'not-a-uuid\' or 1=1' } });
    expect(b.headers.get('x-request-id')).toMatch(UUID);
    expect(b.headers.get('x-request-id')).not.toContain('uuid');
    // Also echoed on errors raised before routing.
    const c = await s.call('GET', '/nope', { key: null, headers: { 'x-request-id': mine } });
    expect(c.headers.get('x-request-id')).toBe(mine);
    // Echoed exactly as sent.
    const upper = mine.toUpperCase();
    expect((await s.call('GET', '/health', { headers: { 'x-request-id': upper } })).headers.get('x-request-id')).toBe(upper);
  });

  it('an unknown route is ROUTE_NOT_FOUND in the envelope, with or without a key', async () => {
    expectError(await s.call('GET', '/does-not-exist', { key: null }), { status: 404, code: 'ROUTE_NOT_FOUND' });
    expectError(await s.call('DELETE', '/health'), { status: 404, code: 'ROUTE_NOT_FOUND' });
    expectError(await s.call('GET', '/../../etc/passwd'), { status: 404, code: 'ROUTE_NOT_FOUND' });
    expectError(await s.call('GET', '/records/%E0%A4%A'), { status: 404, code: 'ROUTE_NOT_FOUND' });
  });

  it('an unexpected failure is a masked 500 without a code, the cause kept out of the body', async () => {
    const r = await s.call('POST', '/records/company', { body: { name: 'x' } });
    expectError(r, { status: 500, code: undefined, message: 'Internal server error', errors: false });
    expect(r.text).not.toContain('secret detail');
  });
});

describe('authentication', () => {
  it('no key → 403 SCHEMA_ACTOR_CONTEXT_REQUIRED', async () => {
    expectError(await s.call('GET', '/schema/objects', { key: null }), { status: 403, code: 'SCHEMA_ACTOR_CONTEXT_REQUIRED' });
  });

  it('unknown, malformed or other-scheme keys → 401 AUTH_INVALID_API_KEY', async () => {
    expectError(await s.call('GET', '/schema/objects', { key: 'ssk_nope_nope' }), { status: 401, code: 'AUTH_INVALID_API_KEY' });
    expectError(await s.call('GET', '/schema/objects', { key: 'bad key with spaces' }), { status: 401, code: 'AUTH_INVALID_API_KEY' });
    expectError(await s.call('GET', '/schema/objects', { headers: { authorization: `Basic ${btoa('a:b')}` } }), {
      status: 401,
      code: 'AUTH_INVALID_API_KEY',
    });
  });

  it('accepts Bearer and x-api-key', async () => {
    expect((await s.call('GET', '/schema/objects')).status).toBe(200);
    const r = await s.call('GET', '/schema/objects', { key: null, headers: { 'x-api-key': s.ownerKey } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: [], page: { nextCursor: null, total: 0 } });
  });

  it('a revoked key is refused with 401', async () => {
    const key = await s.keyFor('member');
    expect((await s.call('GET', '/schema/objects', { key })).status).toBe(200);
    const id = (await s.store.listKeys()).find((k) => k.name === 'member key' && !k.revokedAt)!.id;
    expect((await s.call('DELETE', `/keys/${id}`)).body).toEqual({ success: true, data: { id } });
    expectError(await s.call('GET', '/schema/objects', { key }), { status: 401, code: 'AUTH_INVALID_API_KEY' });
  });
});

describe('permissions', () => {
  it('viewer reads but cannot write; the refusal names nothing', async () => {
    const viewer = await s.keyFor('viewer');
    expect((await s.call('GET', '/schema/objects', { key: viewer })).status).toBe(200);
    const r = await s.call('POST', '/schema/objects', { key: viewer, body: { name: 'deal' } });
    expectError(r, { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN_MESSAGE });
    expectError(await s.call('POST', '/records/deal', { key: viewer, body: { a: 1 } }), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN_MESSAGE });
  });

  it('member manages records but not schema or keys', async () => {
    const member = await s.keyFor('member');
    expectError(await s.call('GET', '/keys', { key: member }), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN_MESSAGE });
    expectError(await s.call('DELETE', '/schema/objects/deal', { key: member }), { status: 403, code: 'SCHEMA_FORBIDDEN' });
  });

  it('a key does only what both its role and its scopes allow', async () => {
    const scoped = await s.keyFor('owner', ['records:read']);
    expectError(await s.call('GET', '/schema/objects', { key: scoped }), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN_MESSAGE });
    const viewerWithWrite = await s.keyFor('viewer', ['records:write', 'records:read']);
    expectError(await s.call('POST', '/records/deal', { key: viewerWithWrite, body: { a: 1 } }), { status: 403, code: 'SCHEMA_FORBIDDEN' });
  });

  it('admin manages keys except owner keys', async () => {
    const admin = await s.keyFor('admin');
    const created = await s.call('POST', '/keys', { key: admin, body: { name: 'ci', role: 'member', scopes: ['records:read'] } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'ci', role: 'member', scopes: ['records:read'], secret: expect.any(String) });
    expectError(await s.call('POST', '/keys', { key: admin, body: { name: 'x', role: 'owner' } }), { status: 403, code: 'SCHEMA_FORBIDDEN' });
    const ownerId = (await s.store.listKeys()).find((k) => k.role === 'owner')!.id;
    expectError(await s.call('DELETE', `/keys/${ownerId}`, { key: admin }), { status: 403, code: 'SCHEMA_FORBIDDEN' });
    const list = await s.call('GET', '/keys', { key: admin });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(created.body.data.secret);
  });
});

describe('request bodies', () => {
  it('malformed JSON → 400 Validation failed, no code, errors', async () => {
    const r = await s.call('POST', '/schema/objects', { raw: '{"name": ' });
    expectError(r, { status: 400, code: undefined, message: 'Validation failed', errors: true });
  });

  it('a non-JSON content type is a body failure, not a 415 or 500', async () => {
    const r = await s.call('POST', '/schema/objects', { raw: 'name=deal', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectError(r, { status: 400, code: undefined, message: 'Validation failed', errors: true });
  });

  it('__proto__ and constructor.prototype keys are refused (400), never reaching a prototype', async () => {
    const r = await s.call('POST', '/schema/objects', { raw: '{"name":"deal","__proto__":{"polluted":true}}' });
    expectError(r, { status: 400, code: undefined, message: 'Validation failed', errors: true });
    expect(r.body.errors[0].message).toMatch(/__proto__/);
    const nested = await s.call('POST', '/records/deal', { raw: '{"meta":{"constructor":{"prototype":{"x":1}}}}' });
    expectError(nested, { status: 400, code: undefined, message: 'Validation failed' });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('schema failures list every field with a path into the body', async () => {
    const r = await s.call('POST', '/schema/objects', {
      body: { label: 3, attributes: [{ name: 'a', type: 'strng' }, { type: 'text', typo: 1 }] },
    });
    expectError(r, { status: 400, code: undefined, message: 'Validation failed', errors: true });
    const paths = (r.body.errors as { path: unknown[] }[]).map((e) => JSON.stringify(e.path));
    expect(paths).toEqual(
      expect.arrayContaining(['["name"]', '["label"]', '["attributes",0,"type"]', '["attributes",1,"name"]', '["attributes",1,"typo"]']),
    );
  });

  it('a record update without if-match, or with an empty body, is 400 Validation failed', async () => {
    const id = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    const noHeader = await s.call('PUT', `/records/deal/${id}`, { body: { a: 1 } });
    expectError(noHeader, { status: 400, code: undefined, message: 'Validation failed', errors: true });
    expect(noHeader.body.errors).toContainEqual({ path: ['headers', 'if-match'], message: 'is required' });
    const bad = await s.call('PUT', `/records/deal/${id}`, { body: { a: 1 }, headers: { 'if-match': 'yesterday' } });
    expectError(bad, { status: 400, code: undefined, message: 'Validation failed', errors: true });
    const empty = await s.call('PUT', `/records/deal/${id}`, { body: {}, headers: { 'if-match': '"1"' } });
    expectError(empty, { status: 400, code: undefined, message: 'Validation failed', errors: true });
  });

  it('bulk-delete takes 1..1000 UUIDs', async () => {
    const notUuid = await s.call('POST', '/records/deal/bulk-delete', { body: { ids: ['1', 'x'] } });
    expectError(notUuid, { status: 400, code: undefined, errors: true });
    expect(notUuid.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([['ids', 0], ['ids', 1]]);
    expectError(await s.call('POST', '/records/deal/bulk-delete', { body: { ids: [] } }), { status: 400, code: undefined });
    const many = Array.from({ length: 1001 }, () => crypto.randomUUID());
    expectError(await s.call('POST', '/records/deal/bulk-delete', { body: { ids: many } }), { status: 400, code: undefined });
  });

  it('a body over the limit → 413 PAYLOAD_TOO_LARGE', async () => {
    const r = await s.call('POST', '/records/deal', { body: { blob: 'x'.repeat(100 * 1024) } });
    expectError(r, { status: 413, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('search validates its body without coercing types', async () => {
    const r = await s.call('POST', '/records/deal/search', { body: { limit: '10', sort: [{ attribute: 'a', direction: 'up' }] } });
    expectError(r, { status: 400, code: undefined, errors: true });
    const paths = r.body.errors.map((e: { path: unknown[] }) => JSON.stringify(e.path));
    expect(paths).toEqual(expect.arrayContaining(['["limit"]', '["sort",0,"direction"]']));
  });
});

describe('openapi.json', () => {
  it('is OpenAPI 3.1, open, and lists every route of contract.md §3', async () => {
    const r = await s.call('GET', '/openapi.json', { key: null });
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    const expected = [
      'get /health',
      'get /openapi.json',
      'get /schema/objects',
      'post /schema/objects',
      'get /schema/objects/{objectId}',
      'delete /schema/objects/{objectId}',
      'post /schema/objects/{objectId}/attributes',
      'put /schema/objects/{objectId}/attributes/{id}',
      'delete /schema/objects/{objectId}/attributes/{id}',
      'get /schema/sources/{id}',
      'put /schema/sources/{id}',
      'post /records/{objectName}',
      'get /records/{objectName}/{id}',
      'put /records/{objectName}/{id}',
      'delete /records/{objectName}/{id}',
      'post /records/{objectName}/bulk-create',
      'post /records/{objectName}/bulk-update',
      'post /records/{objectName}/bulk-delete',
      'post /records/{objectName}/search',
      'post /keys',
      'get /keys',
      'delete /keys/{id}',
      'get /views',
      'get /views/{name}',
    ];
    const listed = Object.entries(r.body.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
      Object.keys(ops).filter((m) => m !== 'parameters').map((m) => `${m} ${p}`),
    );
    // Every route of contract.md §3 is documented (other engineers add more, e.g. files).
    expect(listed).toEqual(expect.arrayContaining(expected));
    // Paths are relative to the one server entry, /v1 (contract.md §3 "Also served").
    expect(r.body.servers).toEqual([expect.objectContaining({ url: '/v1' })]);
    const put = r.body.paths['/records/{objectName}/{id}'].put;
    expect(put.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'if-match', required: true }));
    expect(put.requestBody.content['application/json'].schema.minProperties).toBe(1);
    expect(r.body.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('documents the multipart upload bodies and the binary file content, which no JSON schema validates', async () => {
    const { paths } = (await s.call('GET', '/openapi.json', { key: null })).body;
    const upload = paths['/files'].post.requestBody;
    expect(upload.content['multipart/form-data'].schema).toMatchObject({ required: ['file'], properties: { file: { type: 'string', format: 'binary' } } });
    const attach = paths['/upload/{objectName}/{recordId}/{attribute}'].post.requestBody.content['multipart/form-data'].schema;
    expect(Object.keys(attach.properties)).toEqual(['file', 'title']);
    const content = paths['/files/{id}/content'].get.responses;
    expect(content['200'].content['application/octet-stream'].schema).toEqual({ type: 'string', format: 'binary' });
    expect(content['4XX']).toEqual({ $ref: '#/components/responses/Error' });
  });
});
