import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeFetch } from '../../cli/node-fetch.js';
import { SchemaClient, ServiceRequestError } from '../../engine/sdk/index.js';
import { within } from '../api/helpers.js';

/**
 * The SDK against small real HTTP servers on 127.0.0.1 that misbehave on purpose: answers
 * lost, bodies that stall or are cut off, downloads that never start. Bounds are generous
 * limits on hangs, not measurements. Everything runs twice: over the global fetch (the SDK's
 * default) and over the CLI's node:http fetch (cli/node-fetch.ts), which must fail the same way.
 */
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server | undefined;
const seen: { method: string; url: string; headers: IncomingMessage['headers'] }[] = [];

async function serve(...handlers: Handler[]): Promise<string> {
  seen.length = 0;
  let i = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      handlers[Math.min(i++, handlers.length - 1)]!(req, res);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

afterEach(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise<void>((r) => server!.close(() => r()));
  }
  server = undefined;
});

const json = (status: number, body: unknown): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const ok = (data: unknown) => json(200, { success: true, data });
const never: Handler = () => {/* the answer is lost */};
/** Headers, a first piece of the body, then nothing. */
const stall: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
  res.write('{"success":true,');
};
/** Headers, a first piece of the body, then the connection is reset. */
const cut: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
  res.write('{"success":true,', () => setTimeout(() => res.socket?.destroy(), 20));
};

/** The fetch the clients of the suite below use (each suite runs once per implementation). */
let fetchImpl: typeof fetch | undefined;
const client = (baseUrl: string, extra: Partial<ConstructorParameters<typeof SchemaClient>[0]> = {}) =>
  new SchemaClient({ baseUrl, apiKey: 'k1', retryDelayMs: 1, ...(fetchImpl ? { fetch: fetchImpl } : {}), ...extra });
const failure = (p: Promise<unknown>) => within(p.then(() => undefined, (e: unknown) => e), 10_000, 'the call') as Promise<ServiceRequestError>;

describe.each([
  ['the global fetch', undefined],
  ["the CLI's node:http fetch", nodeFetch],
] as const)('over %s', (_name, impl) => {
  beforeAll(() => {
    fetchImpl = impl;
  });
  afterAll(() => {
    fetchImpl = undefined;
  });

  describe('SDK: path segments', () => {
    const cases: [string, (c: SchemaClient) => Promise<unknown>][] = [
      ["records('..').get('keys')", (c) => c.records('..').get('keys')],
      ["records('deal').get('..')", (c) => c.records('deal').get('..')],
      ["records('deal').get('.')", (c) => c.records('deal').get('.')],
      ["records('deal').get('')", (c) => c.records('deal').get('')],
      ["records('deal').get('%2E%2E')", (c) => c.records('deal').get('%2E%2E')],
      ["records('..').search()", (c) => c.records('..').search()],
      ["records('deal').update('..')", (c) => c.records('deal').update('..', {}, { ifMatch: '*' })],
      ["records('deal').delete('.')", (c) => c.records('deal').delete('.')],
      ["records('%2e').create()", (c) => c.records('%2e').create({})],
      ["schema.getObject('..')", (c) => c.schema.getObject('..')],
      ["schema.deleteAttribute('other', '..')", (c) => c.schema.deleteAttribute('other', '..')],
      ["schema.updateAttribute('..', 'a')", (c) => c.schema.updateAttribute('..', 'a', {})],
      ["sources.push('..')", (c) => c.sources.push('..', { objects: {}, views: {} })],
      ["keys.revoke('..')", (c) => c.keys.revoke('..')],
      ["views.delete('.')", (c) => c.views.delete('.')],
      ["files.download('..')", (c) => c.files.download('..')],
      ["files.uploadTo(record '..')", (c) => c.files.uploadTo({ object: 'deal', recordId: '..', attribute: 'doc' }, { data: new Uint8Array([1]), name: 'a.bin' })],
      ["documents.delete('..')", (c) => c.documents.delete('..')],
    ];
    it.each(cases)('%s is refused with 400 SCHEMA_VALIDATION_FAILED before any request', async (_name, call) => {
      const url = await serve(ok({ id: 'x' }));
      const err = await failure(call(client(url)));
      expect(err).toBeInstanceOf(ServiceRequestError);
      expect(err).toMatchObject({ status: 400, code: 'SCHEMA_VALIDATION_FAILED', requestId: undefined });
      expect(err.message).toMatch(/path segment/);
      expect(seen).toHaveLength(0);
    });

    it('other names are encoded and sent as one segment', async () => {
      const url = await serve(ok({ id: 'x' }));
      await client(url).records('a/b').get('..x?#');
      expect(seen[0]!.url).toBe('/v1/records/a%2Fb/..x%3F%23');
    });
  });

  describe('SDK: requests that must not be repeated', () => {
    it('update with a version in ifMatch is sent once when its answer is lost', async () => {
      const url = await serve(never, ok({ id: 'a' }));
      const err = await failure(client(url, { timeoutMs: 200 }).records('deal').update('a', { x: 1 }, { ifMatch: 1 }));
      expect(err).toMatchObject({ status: 0, message: `Could not connect to ${url}` });
      expect(seen).toHaveLength(1);
    });

    it('update with a version in ifMatch is not retried on 5xx; with ifMatch "*" it is', async () => {
      const url = await serve(json(503, { success: false, message: 'x' }), ok({ id: 'a' }));
      await expect(client(url).records('deal').update('a', { x: 1 }, { ifMatch: 2 })).rejects.toMatchObject({ status: 503 });
      expect(seen).toHaveLength(1);
      const url2 = await serve(json(503, { success: false, message: 'x' }), ok({ id: 'a' }));
      expect(await client(url2).records('deal').update('a', { x: 1 }, { ifMatch: '*' })).toEqual({ id: 'a' });
      expect(seen).toHaveLength(2);
    });

    it('push with ifMatch is sent once; without it a push is still retried', async () => {
      const url = await serve(never, ok({ version: 2, applied: true, plan: { steps: [] } }));
      const err = await failure(client(url, { timeoutMs: 200 }).sources.push('crm', { objects: {}, views: {} }, { ifMatch: 1 }));
      expect(err.status).toBe(0);
      expect(seen).toHaveLength(1);
      const url2 = await serve(json(502, { success: false, message: 'x' }), ok({ version: 2, applied: true, plan: { steps: [] } }));
      expect((await client(url2).sources.push('crm', { objects: {}, views: {} })).version).toBe(2);
      expect(seen).toHaveLength(2);
    });

    it('a delete is sent once, so a lost answer is not turned into a 404', async () => {
      const url = await serve(json(502, { success: false, message: 'x' }), json(404, { success: false, code: 'SCHEMA_RECORD_NOT_FOUND', message: 'gone' }));
      await expect(client(url).records('deal').delete('a')).rejects.toMatchObject({ status: 502 });
      expect(seen).toHaveLength(1);
    });

    it('a write sent once still repeats after a 429, which means nothing was done', async () => {
      const throttled = json(429, { success: false, statusCode: 429, message: 'ThrottlerException: Too Many Requests' });
      const url = await serve(throttled, json(200, { success: true, data: { id: 'a' } }));
      expect(await client(url).records('deal').delete('a')).toEqual({ id: 'a' });
      expect(seen.map((s) => s.method)).toEqual(['DELETE', 'DELETE']);
      const url2 = await serve(throttled, ok({ id: 'a', version: 2 }));
      expect(await client(url2).records('deal').update('a', { title: 't' }, { ifMatch: 1 })).toMatchObject({ version: 2 });
      expect(seen).toHaveLength(2);
    });

    it('bulkDelete takes the caller’s idempotency key and repeats it on a retry', async () => {
      const url = await serve(json(502, { success: false, message: 'x' }), ok({ deleted: 1 }));
      expect(await client(url).records('deal').bulkDelete(['a'], { idempotencyKey: 'mine-1' })).toEqual({ deleted: 1 });
      expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['mine-1', 'mine-1']);
    });
  });

  describe('SDK: answers whose body never completes', () => {
    it('a body that stalls is retried like a lost connection, then succeeds', async () => {
      const url = await serve(stall, stall, ok({ id: 'r1' }));
      expect(await within(client(url, { timeoutMs: 200 }).records('deal').get('r1'), 10_000, 'get')).toEqual({ id: 'r1' });
      expect(seen).toHaveLength(3);
    });

    it('a body that stalls, with no retry left, is status 0 "Could not connect"', async () => {
      const url = await serve(stall);
      const err = await failure(client(url, { timeoutMs: 200, retries: 0 }).records('deal').get('r1'));
      expect(err).toMatchObject({ status: 0, message: `Could not connect to ${url}` });
    });

    it('a body cut off by a reset is retried, then succeeds; not retried for a create without key', async () => {
      const url = await serve(cut, ok({ id: 'r1' }));
      expect(await within(client(url).records('deal').get('r1'), 10_000, 'get')).toEqual({ id: 'r1' });
      expect(seen).toHaveLength(2);
      const url2 = await serve(cut, ok({ id: 'o' }));
      const err = await failure(client(url2).schema.createObject({ name: 'x' }));
      expect(err).toMatchObject({ status: 0, message: `Could not connect to ${url2}` });
      expect(seen).toHaveLength(1);
    });

    it('a complete body that is not JSON is still "not JSON", not retried', async () => {
      const url = await serve((_req, res) => res.end('<html>hi</html>'), ok({ id: 'r1' }));
      const err = await failure(client(url).records('deal').get('r1'));
      expect(err).toMatchObject({ status: 200, message: 'The service answered with a body that is not JSON' });
      expect(seen).toHaveLength(1);
    });
  });

  describe('SDK: files.download and timeoutMs', () => {
    it('a server that never answers fails with status 0 after the retries', async () => {
      const url = await serve(never);
      const err = await failure(client(url, { timeoutMs: 200, retries: 1 }).files.download('f1'));
      expect(err).toMatchObject({ status: 0, message: `Could not connect to ${url}` });
      expect(seen).toHaveLength(2);
    });

    it('a body that stops moving errors the stream with status 0', async () => {
      const url = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '100' });
        res.write('abc');
      });
      const res = await within(client(url, { timeoutMs: 200, retries: 0 }).files.download('f1'), 10_000, 'download');
      const err = await failure(res.text());
      expect(err).toBeInstanceOf(ServiceRequestError);
      expect(err).toMatchObject({ status: 0, message: `Could not connect to ${url}` });
    });

    it('a download that takes longer than timeoutMs but keeps moving completes', async () => {
      const chunks = 12;
      const url = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(chunks) });
        let n = 0;
        const tick = setInterval(() => {
          res.write('x');
          if (++n === chunks) {
            clearInterval(tick);
            res.end();
          }
        }, 50);
      });
      const res = await client(url, { timeoutMs: 400, retries: 0 }).files.download('f1');
      expect(res.headers.get('content-length')).toBe(String(chunks));
      expect(await within(res.text(), 10_000, 'the body')).toBe('x'.repeat(chunks));
    });
  });

  describe('SDK: baseUrl', () => {
    it('a trailing slash is dropped: paths have no double slash, the message names the base once', async () => {
      const url = await serve(ok([]));
      await client(`${url}/`).schema.listObjects();
      expect(seen[0]!.url).toBe('/v1/schema/objects');
      await new Promise<void>((r) => server!.close(() => r()));
      server = undefined;
      const err = await failure(client(`${url}/`, { retries: 0 }).health());
      expect(err).toMatchObject({ status: 0, message: `Could not connect to ${url}` });
    });
  });
});
