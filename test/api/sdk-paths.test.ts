import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaClient } from '../../engine/sdk/index.js';
import { startTestServer, type TestServer } from './helpers.js';

/** The SDK against the real server: a '.' or '..' name never reaches another route. */
let s: TestServer;
let c: SchemaClient;

beforeAll(async () => {
  s = await startTestServer();
  c = new SchemaClient({ baseUrl: s.base, apiKey: s.ownerKey });
  await s.defineObject('deal', [{ name: 'title', type: 'text' }]);
  await s.defineObject('other', [{ name: 'x', type: 'text' }]);
});
afterAll(async () => s.close());

const refusal = { status: 400, code: 'SCHEMA_VALIDATION_FAILED' };

describe('SDK path segments against the server', () => {
  it("records('..').get('keys') is refused, not answered with the key list", async () => {
    await expect(c.records('..').get('keys')).rejects.toMatchObject(refusal);
    await expect(c.records('..').search()).rejects.toMatchObject(refusal);
  });

  it("records('deal').get('..') is refused, not answered with the object's records", async () => {
    await c.records('deal').create({ title: 'a' });
    await expect(c.records('deal').get('..')).rejects.toMatchObject(refusal);
  });

  it("schema.deleteAttribute('other', '..') is refused and 'other' survives", async () => {
    await expect(c.schema.deleteAttribute('other', '..')).rejects.toMatchObject(refusal);
    expect((await c.schema.getObject('other')).name).toBe('other');
  });
});
