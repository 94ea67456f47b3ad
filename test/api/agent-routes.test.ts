import { clearOfMinuteEnd } from '../support/minute-window.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaClient, ServiceRequestError } from '../../engine/sdk/index.js';
import { expectError, startTestServer, type TestServer } from './helpers.js';

/**
 * The agent chat and streaming routes (contract.md §3 "Also served") and GET /keys/self,
 * against a real server.
 */
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ rateLimit: true });
});
afterAll(async () => s.close());

describe('agent chat and stream', () => {
  it('answer 503 CONFIGURATION_REQUIRED (masked message), need a key, and count in the AI bucket of 5 a minute', async () => {
    await clearOfMinuteEnd();
    expectError(await s.call('POST', '/agent/chat', { body: { message: 'hello' } }), { status: 503, code: 'CONFIGURATION_REQUIRED', message: 'Internal server error' });
    expectError(await s.call('GET', '/agent/stream'), { status: 503, code: 'CONFIGURATION_REQUIRED', message: 'Internal server error' });
    // Whatever the body, the capability is missing: 503, not a 400 about the body.
    expectError(await s.call('POST', '/agent/chat', { raw: '[1,2]' }), { status: 503, code: 'CONFIGURATION_REQUIRED' });
    expectError(await s.call('POST', '/agent/chat', { key: null, body: {} }), { status: 403, code: 'SCHEMA_ACTOR_CONTEXT_REQUIRED' });
    // 4 AI requests so far; the 5th is the last of the minute, the 6th is throttled.
    expectError(await s.call('GET', '/agent/stream'), { status: 503, code: 'CONFIGURATION_REQUIRED' });
    expectError(await s.call('GET', '/agent/stream'), { status: 429 });
    // The default bucket is untouched by them.
    expect((await s.call('GET', '/schema/objects')).status).toBe(200);
  });

  it('are never retried by the SDK', async () => {
    const fresh = await startTestServer({ rateLimit: false });
    try {
      const sent: string[] = [];
      const client = new SchemaClient({
        baseUrl: fresh.base,
        apiKey: fresh.ownerKey,
        retries: 4,
        retryDelayMs: 1,
        fetch: (async (input: string | URL | Request, init?: RequestInit) => {
          sent.push(`${init?.method ?? 'GET'} ${String(input)}`);
          return fetch(input, init);
        }) as typeof fetch,
      });
      for (const [method, path] of [['POST', '/agent/chat'], ['GET', '/agent/stream']] as const) {
        // POST marked idempotent and a GET: both would be repeated on any other 5xx.
        const err = await client.transport.request(method, path, method === 'POST' ? { body: {}, idempotent: true } : {}).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ServiceRequestError);
        expect(err).toMatchObject({ status: 503, code: 'CONFIGURATION_REQUIRED' });
      }
      expect(sent).toEqual([`POST ${fresh.base}/agent/chat`, `GET ${fresh.base}/agent/stream`]);
    } finally {
      await fresh.close();
    }
  });
});

describe('GET /keys/self', () => {
  it('tells any key its role, scopes and the actions both allow, never a secret', async () => {
    const viewer = await s.keyFor('viewer', ['records:read', 'records:write', 'mcp']);
    const me = await s.call('GET', '/keys/self', { key: viewer });
    expect(me.status).toBe(200);
    expect(me.body.data).toEqual({ id: expect.any(String), name: 'viewer key', role: 'viewer', scopes: ['records:read', 'records:write', 'mcp'], actions: ['records:read', 'mcp'] });
    const owner = await new SchemaClient({ baseUrl: s.base, apiKey: s.ownerKey }).keys.self();
    expect(owner).toMatchObject({ role: 'owner', scopes: null });
    expect(owner.actions).toContain('keys:manage');
    expect(JSON.stringify(owner)).not.toContain('ssk_');
    expectError(await s.call('GET', '/keys/self', { key: null }), { status: 403, code: 'SCHEMA_ACTOR_CONTEXT_REQUIRED' });
  });

  it('is documented in the OpenAPI document with the MCP and agent routes', async () => {
    const doc = (await s.call('GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/keys/self', '/mcp', '/agent/chat', '/agent/stream']));
    expect(doc.paths['/keys/self'].get.responses['200']).toBeDefined();
  });
});
