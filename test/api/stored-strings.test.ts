import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaClient, ServiceRequestError } from '../../engine/sdk/index.js';
import { expectError, pushDeclaration, startTestServer, type TestServer } from './helpers.js';

// Issue 21: what the server acknowledges is what it stores. A lone surrogate arrives in a
// JSON body as an escape ("a\ud800"; JSON.stringify writes it so) and has no UTF-8 form:
// every stored or compared string must be well-formed, else 400 SCHEMA_VALIDATION_FAILED
// at its path (or the spec's name code for a name), and nothing is written.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await s.defineObject('item', [
    { name: 'title', type: 'text', unique: true, maxLength: 3 },
    { name: 'stage', type: 'select', options: ['a', 'b'] },
    { name: 'tags', type: 'multiselect', options: ['x', 'y'] },
    { name: 'mail', type: 'email' },
    { name: 'link', type: 'url' },
    { name: 'data', type: 'json' },
  ]);
});
afterAll(() => s.close());

const LONE_HIGH = 'a\ud800';
const LONE_LOW = 'a\udc00';

async function count(): Promise<number> {
  const r = await s.call('POST', '/records/item/search', { body: { limit: 500 } });
  return (r.body.data as unknown[]).length;
}

function pathsOf(body: { errors?: { path: unknown[] }[] }): unknown[][] {
  return (body.errors ?? []).map((e) => e.path);
}

describe('record values must be well-formed Unicode', () => {
  it.each([
    ['title', LONE_HIGH],
    ['title', LONE_LOW],
    ['title', '\udc00\ud800'],
    ['mail', `me${LONE_HIGH}@x.io`],
    ['link', `https://x.io/${LONE_HIGH}`],
    ['data', LONE_HIGH],
  ])('create refuses %s = %j and stores nothing', async (attr, value) => {
    const r = await s.call('POST', '/records/item', { body: { [attr]: value } });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(pathsOf(r.body)).toEqual([[attr]]);
    expect(r.body.message).toMatch(/well-formed Unicode/);
    expect(await count()).toBe(0);
  });

  it('a json value is checked at any depth, keys included, and the path points there', async () => {
    const deep = await s.call('POST', '/records/item', { body: { data: { k: ['ok', `x${'\udfff'}`] } } });
    expectError(deep, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(pathsOf(deep.body)).toEqual([['data', 'k', 1]]);
    const key = await s.call('POST', '/records/item', { body: { data: { [`k${'\ud83d'}`]: 1 } } });
    expectError(key, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(pathsOf(key.body)).toEqual([['data', `k${'\ud83d'}`]]);
    expect(await count()).toBe(0);
  });

  it('bulk-create names the item and writes none; update refuses too', async () => {
    const bulk = await s.call('POST', '/records/item/bulk-create', { body: { records: [{ title: 'ok' }, { title: LONE_HIGH }] } });
    expectError(bulk, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(pathsOf(bulk.body)).toEqual([['records', 1, 'title']]);
    expect(await count()).toBe(0);
    const made = await s.call('POST', '/records/item', { body: { title: 'ok' } });
    expect(made.status).toBe(201);
    const put = await s.call('PUT', `/records/item/${made.body.data.id}`, { body: { title: LONE_LOW }, headers: { 'if-match': '*' } });
    expectError(put, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    const read = await s.call('GET', `/records/item/${made.body.data.id}`);
    expect(read.body.data.values.title).toBe('ok');
    await s.call('DELETE', `/records/item/${made.body.data.id}`);
  });

  it('well-formed astral text is stored and read back exactly, maxLength counting it as one character', async () => {
    const made = await s.call('POST', '/records/item', { body: { title: 'a😀b', data: { '😀': ['𝄞'] } } });
    expect(made.status).toBe(201);
    const read = await s.call('GET', `/records/item/${made.body.data.id}`);
    expect(read.body.data.values).toMatchObject({ title: 'a😀b', data: { '😀': ['𝄞'] } });
    const found = await s.call('POST', '/records/item/search', { body: { filter: { title: { eq: 'a😀b' } } } });
    expect(found.body.data).toHaveLength(1);
    await s.call('DELETE', `/records/item/${made.body.data.id}`);
  });

  it('a filter operand that could never equal a stored string is refused, not compared', async () => {
    const r = await s.call('POST', '/records/item/search', { body: { filter: { title: { eq: LONE_HIGH } } } });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED' });
    expect(r.body.message).toMatch(/well-formed Unicode/);
  });
});

describe('schema, declarations, files, documents and keys follow the same rule', () => {
  it('an object name gets its own code; a label, an attribute label or an option SCHEMA_VALIDATION_FAILED at its path', async () => {
    expectError(await s.call('POST', '/schema/objects', { body: { name: `n${'\ud800'}` } }), { status: 400, code: 'SCHEMA_INVALID_OBJECT_NAME' });
    const label = await s.call('POST', '/schema/objects', { body: { name: 'thing', label: LONE_HIGH } });
    expectError(label, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(pathsOf(label.body)).toEqual([['label']]);
    const attr = await s.call('POST', '/schema/objects/item/attributes', { body: { name: 'note', type: 'text', description: LONE_LOW } });
    expectError(attr, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(pathsOf(attr.body)).toEqual([['description']]);
    const option = await s.call('PUT', '/schema/objects/item/attributes/stage', { body: { options: ['a', 'b', LONE_HIGH] } });
    expectError(option, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(pathsOf(option.body)).toEqual([['options', 2]]);
    const objects = await s.call('GET', '/schema/objects');
    expect((objects.body.data as { name: string }[]).map((o) => o.name)).toEqual(['item']);
  });

  it('a pushed declaration is refused whole at the bad string', async () => {
    const r = await pushDeclaration(s, {
      objects: { deal: { label: `Deal${'\udc00'}`, attributes: { stage: { type: 'select', options: ['won', `lost${'\ud800'}`] } } } },
      views: {},
    });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(pathsOf(r.body)).toEqual(
      expect.arrayContaining([
        ['declaration', 'objects', 'deal', 'label'],
        ['declaration', 'objects', 'deal', 'attributes', 'stage', 'options', 1],
      ]),
    );
    expect((await s.call('GET', '/schema/sources/crm')).status).toBe(404);
  });

  it('a document title, a file name and a key name are refused', async () => {
    const doc = await s.call('PATCH', '/documents/00000000-0000-4000-8000-000000000000', { body: { title: LONE_HIGH } });
    expectError(doc, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    const form = new FormData();
    form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'hello.txt');
    const up = await fetch(`${s.base}/files`, { method: 'POST', headers: { authorization: `Bearer ${s.ownerKey}` }, body: form });
    const file = ((await up.json()) as { data: { id: string } }).data;
    const rename = await s.call('PUT', `/files/${file.id}`, { body: { name: `x${'\ud800'}.txt` } });
    expectError(rename, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(rename.body.errors[0].message).toMatch(/well-formed Unicode/);
    expect((await s.call('GET', `/files/${file.id}`)).body.data.name).toBe('hello.txt');
    const key = await s.call('POST', '/keys', { body: { name: LONE_HIGH, role: 'viewer' } });
    expectError(key, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(pathsOf(key.body)).toEqual([['name']]);
  });
});

describe('the SDK refuses what the service would, before sending', () => {
  function client(): { sdk: SchemaClient; sent: () => number } {
    let sent = 0;
    const counting: typeof fetch = (input, init) => {
      sent++;
      return fetch(input, init);
    };
    return { sdk: new SchemaClient({ baseUrl: s.base, apiKey: s.ownerKey, fetch: counting }), sent: () => sent };
  }

  async function refusal(p: Promise<unknown>): Promise<ServiceRequestError> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceRequestError);
    const e = err as ServiceRequestError;
    expect(e.status).toBe(400);
    expect(e.code).toBe('SCHEMA_VALIDATION_FAILED');
    return e;
  }

  it('record values, nested json and bulk items: the service\'s words, nothing sent', async () => {
    const { sdk, sent } = client();
    const one = await refusal(sdk.records('item').create({ title: LONE_HIGH }));
    expect(one.message).toMatch(/^title must be well-formed Unicode: .*; nothing was sent\.$/);
    const deep = await refusal(sdk.records('item').create({ data: { k: ['ok', LONE_LOW] } }));
    expect(deep.details).toEqual([{ path: ['data', 'k', 1], message: expect.stringMatching(/^data\.k\[1\] must be well-formed Unicode/) }]);
    const bulk = await refusal(sdk.records('item').bulkCreate([{ title: 'ok' }, { title: LONE_HIGH }]));
    expect(bulk.details?.[0]?.path).toEqual(['records', 1, 'title']);
    await refusal(sdk.records('item').create({ data: JSON.parse('{"__proto__":{"polluted":1}}') as unknown }));
    expect(sent()).toBe(0);
    expect(await count()).toBe(0);
  });

  it('bulk items given as JSON text (records import sends lines as read) are checked as the values they spell', async () => {
    const { sdk, sent } = client();
    const lone = await refusal(sdk.records('item').bulkCreateUnanswered(['{"title":"ok"}', '{"title":"\\ud800"}']));
    expect(lone.details?.[0]?.path).toEqual(['records', 1, 'title']);
    // A key spelled with escapes is the key it spells.
    const key = await refusal(sdk.records('item').bulkCreateUnanswered([{ title: 'ok' }, '{"data":{"\\u005f_proto__":{"polluted":1}}}']));
    expect(key.details?.[0]?.path).toEqual(['records', 1, 'data', '__proto__']);
    // A lone surrogate written as such in the text, not escaped (fetch would send U+FFFD).
    const raw = await refusal(sdk.records('item').bulkCreateUnanswered(['{"title":"ok"}', `{"title":"a${LONE_HIGH}"}`]));
    expect(raw.details?.[0]?.path).toEqual(['records', 1, 'title']);
    expect(sent()).toBe(0);
    expect((await sdk.records('item').bulkCreateUnanswered(['{"title":"\\u00e9t"}', { title: 'two' }])).replayed).toBe(false);
    expect(sent()).toBe(1);
    const stored = await s.call('POST', '/records/item/search', { body: { filter: { title: { in: ['ét', 'two'] } }, limit: 10 } });
    expect(stored.body.page.total).toBe(2);
  });

  it('a path segment, an idempotency key or an upload title is refused too, not thrown or replaced', async () => {
    const { sdk, sent } = client();
    await refusal(sdk.records(`item${'\ud800'}`).get('x'));
    await refusal(sdk.records('item').create({ title: 'ok' }, { idempotencyKey: `k${'\udc00'}` }));
    // Encoded into a multipart body, the title would otherwise arrive as U+FFFD.
    await refusal(sdk.files.uploadTo({ object: 'item', recordId: 'x', attribute: 'doc' }, { data: Buffer.from('x'), name: 'x.txt' }, { title: LONE_HIGH }));
    expect(sent()).toBe(0);
  });
});
