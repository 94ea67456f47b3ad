import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaClient, ServiceAuthError, ServiceRequestError } from '../../engine/sdk/index.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

let server: Server | undefined;
const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];

/** A real HTTP server on 127.0.0.1 answering with the scripted handlers, one per request. */
async function serve(...handlers: Handler[]): Promise<string> {
  seen.length = 0;
  let i = 0;
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const h = handlers[Math.min(i++, handlers.length - 1)]!;
      h(req, body, res);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Handler => (_req, _b, res) => {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req-1', ...headers });
  res.end(JSON.stringify(body));
};

const client = (baseUrl: string, extra: Partial<ConstructorParameters<typeof SchemaClient>[0]> = {}) =>
  new SchemaClient({ baseUrl, apiKey: 'k1', retryDelayMs: 1, ...extra });

describe('SchemaClient', () => {
  it('sends the key, unwraps the envelope and builds paths', async () => {
    const url = await serve(json(200, { success: true, data: { id: 'r1', values: { a: 1 } } }));
    const rec = await client(url).records('deal').get('r1');
    expect(rec).toEqual({ id: 'r1', values: { a: 1 } });
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/v1/records/deal/r1' });
    expect(seen[0]!.headers['authorization']).toBe('Bearer k1');
  });

  it('maps an error envelope to ServiceRequestError with code, message, request id and details', async () => {
    const url = await serve(json(400, { success: false, code: 'SCHEMA_VALIDATION_FAILED', message: 'bad', errors: [{ path: ['amount'], message: 'must be a number' }] }));
    const err = await client(url).records('deal').create({ amount: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceRequestError);
    expect(err).toMatchObject({ status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: 'bad', requestId: 'req-1', details: [{ path: ['amount'], message: 'must be a number' }] });
    expect(seen).toHaveLength(1);
  });

  it('401 and 403 are ServiceAuthError', async () => {
    const url = await serve(json(401, { success: false, code: 'AUTH_INVALID_API_KEY', message: 'no' }));
    await expect(client(url).schema.listObjects()).rejects.toBeInstanceOf(ServiceAuthError);
  });

  it('a refused connection is status 0 "Could not connect to <base_url>"', async () => {
    const url = await serve(json(200, {}));
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    const err = (await client(url, { retries: 1 }).health().catch((e: unknown) => e)) as ServiceRequestError;
    expect(err).toBeInstanceOf(ServiceRequestError);
    expect(err.status).toBe(0);
    expect(err.message).toBe(`Could not connect to ${url}`);
  });

  it('a timeout is status 0 too', async () => {
    const url = await serve(() => {/* never answers */});
    const err = (await client(url, { retries: 0, timeoutMs: 50 }).health().catch((e: unknown) => e)) as ServiceRequestError;
    expect(err.status).toBe(0);
    expect(err.message).toMatch(/Could not connect to/);
  });

  it('retries idempotent requests on 429, 408 and 5xx, then succeeds', async () => {
    const url = await serve(json(429, { success: false, message: 'ThrottlerException: Too Many Requests' }), json(503, { success: false, message: 'x' }), json(200, { success: true, data: [] }));
    expect(await client(url).schema.listObjects()).toEqual([]);
    expect(seen).toHaveLength(3);
  });

  it('never retries CONFIGURATION_REQUIRED', async () => {
    const url = await serve(json(503, { success: false, code: 'CONFIGURATION_REQUIRED', message: 'Internal server error' }), json(200, { success: true, data: [] }));
    await expect(client(url).schema.listObjects()).rejects.toMatchObject({ status: 503, code: 'CONFIGURATION_REQUIRED' });
    expect(seen).toHaveLength(1);
  });

  it('never retries a POST without idempotency-key (createObject)', async () => {
    const url = await serve(json(500, { success: false, message: 'Internal server error' }), json(201, { success: true, data: {} }));
    await expect(client(url).schema.createObject({ name: 'x' })).rejects.toMatchObject({ status: 500 });
    expect(seen).toHaveLength(1);
  });

  it('record creates carry their own idempotency-key, the same on every retry', async () => {
    const url = await serve(json(502, { success: false, message: 'x' }), json(201, { success: true, data: { id: 'r1' } }));
    await client(url).records('deal').create({ a: 1 });
    expect(seen).toHaveLength(2);
    const k = seen[0]!.headers['idempotency-key'];
    expect(k).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]!.headers['idempotency-key']).toBe(k);
  });

  it('gives up after the configured retries', async () => {
    const url = await serve(json(500, { success: false, message: 'Internal server error' }));
    await expect(client(url, { retries: 2 }).schema.listObjects()).rejects.toMatchObject({ status: 500 });
    expect(seen).toHaveLength(3);
  });

  it('push sends the declaration, options and a quoted if-match', async () => {
    const url = await serve(json(200, { success: true, data: { version: 2, applied: false, plan: { steps: [] } } }));
    const out = await client(url).sources.push('crm', { objects: {}, views: {} }, { dryRun: true, allowDestructive: ['deal.amount'], ifMatch: 1 });
    expect(out.version).toBe(2);
    expect(seen[0]).toMatchObject({ method: 'PUT', url: '/v1/schema/sources/crm' });
    expect(seen[0]!.headers['if-match']).toBe('"1"');
    expect(JSON.parse(seen[0]!.body)).toEqual({ declaration: { objects: {}, views: {} }, dryRun: true, allowDestructive: ['deal.amount'] });
  });

  it('search returns records and the cursor; update sends if-match', async () => {
    const url = await serve(json(200, { success: true, data: [{ id: 'a' }], page: { nextCursor: 'c2' } }), json(200, { success: true, data: { id: 'a' } }));
    const page = await client(url).records('deal').search({ limit: 1 });
    expect(page).toEqual({ records: [{ id: 'a' }], nextCursor: 'c2' });
    await client(url).records('deal').update('a', { x: 1 }, { ifMatch: 3 });
    expect(seen[1]!.headers['if-match']).toBe('"3"');
  });
});
