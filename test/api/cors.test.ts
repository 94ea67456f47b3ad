import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseCorsOrigins } from '../../engine/server/cors.js';
import { startTestServer, type TestServer } from './helpers.js';

/**
 * contract.md §3 "CORS", over real HTTP: the preflight a browser sends before a
 * cross-origin PUT with a key and if-match, then the real request, as a page on
 * localhost:5173 (a Vite dev server) would make them.
 */
async function preflight(base: string, origin: string, method = 'PUT', headers = 'authorization,content-type,if-match'): Promise<Response> {
  return fetch(`${base}/records/company/00000000-0000-4000-8000-000000000000`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

const allowedHeaders = (res: Response) => (res.headers.get('access-control-allow-headers') ?? '').split(',').map((h) => h.trim().toLowerCase());

describe('default origins: pages served from this machine', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  test.each(['http://localhost:5173', 'http://127.0.0.1:3000', 'http://localhost'])('a preflight from %s is allowed, with the key, if-match and idempotency headers', async (origin) => {
    const res = await preflight(s.base, origin);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    expect(res.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(allowedHeaders(res)).toEqual(
      expect.arrayContaining(['authorization', 'x-api-key', 'content-type', 'if-match', 'idempotency-key', 'prefer', 'x-request-id']),
    );
  });

  test.each(['http://evil.example', 'https://localhost:5173', 'http://localhost.evil.example:5173', 'null'])('a preflight from %s is refused: no access-control-allow-origin, so the browser blocks the call', async (origin) => {
    const res = await preflight(s.base, origin);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    // Nor on the answer to a request sent anyway (a simple GET needs no preflight).
    const get = await fetch(`${s.base}/health`, { headers: { origin } });
    expect(get.status).toBe(200);
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('the real request after it: the answer names the origin and exposes etag and x-request-id to scripts', async () => {
    await s.defineObject('company', [{ name: 'name', type: 'text' }]);
    const res = await fetch(`${s.base}/records/company`, {
      method: 'POST',
      headers: { origin: 'http://localhost:5173', authorization: `Bearer ${s.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Acme' }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(',').map((h) => h.trim().toLowerCase());
    expect(exposed).toEqual(expect.arrayContaining(['etag', 'x-request-id', 'idempotent-replayed', 'preference-applied']));
    // An error answer carries them too, so a page can read why it was refused.
    const refused = await fetch(`${s.base}/records/company`, { method: 'POST', headers: { origin: 'http://localhost:5173' } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
  });
});

describe('--cors sets the list, or * for any origin', () => {
  test('a list allows exactly its origins', async () => {
    const s = await startTestServer({ cors: ['https://app.example.com'] });
    try {
      expect((await preflight(s.base, 'https://app.example.com')).headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect((await preflight(s.base, 'http://localhost:5173')).headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await s.close();
    }
  });

  test('* allows any origin', async () => {
    const s = await startTestServer({ cors: '*' });
    try {
      const res = await preflight(s.base, 'https://anywhere.example');
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    } finally {
      await s.close();
    }
  });

  test('the flag is read as origins: * or scheme://host[:port], nothing else', () => {
    expect(parseCorsOrigins('*')).toEqual({ origins: '*' });
    expect(parseCorsOrigins('http://localhost:5173, https://app.example.com')).toEqual({ origins: ['http://localhost:5173', 'https://app.example.com'] });
    expect(parseCorsOrigins('https://app.example.com/')).toMatchObject({ problem: expect.stringContaining('https://app.example.com') });
    expect(parseCorsOrigins('app.example.com')).toMatchObject({ problem: expect.stringContaining('not an origin') });
    expect(parseCorsOrigins(' , ')).toMatchObject({ problem: expect.any(String) });
  });
});
