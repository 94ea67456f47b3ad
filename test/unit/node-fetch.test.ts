import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeFetch } from '../../cli/node-fetch.js';
import { SchemaClient, ServiceRequestError } from '../../engine/sdk/index.js';

// The CLI's fetch over node:http (cli/node-fetch.ts) against a real server on 127.0.0.1: what
// the SDK's failure suite (sdk-failures.test.ts, run over both fetches) does not reach —
// bodies of every kind the transport sends, headers as a Headers reads them, one kept-alive
// connection for many requests, and a process that ends when its work does.
let server: Server;
let base: string;
const connections: number[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      res.setHeader('x-echo-length', req.headers['content-length'] ?? 'none');
      res.setHeader('x-echo-encoding', req.headers['transfer-encoding'] ?? 'none');
      res.setHeader('x-many', ['a', 'b']);
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      res.writeHead(req.url === '/missing' ? 404 : 200);
      res.end(`${req.method} ${req.headers['x-token'] ?? ''} ${body.toString('utf8')}`);
    });
  });
  server.on('connection', () => connections.push(Date.now()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe("the CLI's fetch", () => {
  it('sends a text body with its byte length (not its UTF-16 length) and the headers given', async () => {
    const body = 'café 🚀 — ünïcode';
    const res = await nodeFetch(`${base}/echo`, { method: 'POST', body, headers: { 'X-Token': 't1' } });
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get('X-Echo-Length')).toBe(String(Buffer.byteLength(body)));
    expect(res.headers.get('x-many')).toBe('a, b');
    expect(res.headers.get('absent')).toBeNull();
    expect(await res.text()).toBe(`POST t1 ${body}`);
  });

  it('streams an async-iterable body chunked, whole and in order', async () => {
    async function* parts(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 50; i++) yield new TextEncoder().encode(`part${i};`);
    }
    const res = await nodeFetch(`${base}/upload`, { method: 'PUT', body: parts() as unknown as RequestInit['body'], duplex: 'half' } as RequestInit);
    expect(res.headers.get('x-echo-encoding')).toBe('chunked');
    expect(await res.text()).toBe(`PUT  ${Array.from({ length: 50 }, (_, i) => `part${i};`).join('')}`);
  });

  it('streams a large body through its back-pressure waits, leaving no listener behind', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const chunk = new Uint8Array(256 * 1024).fill(0x61);
      async function* parts(): AsyncGenerator<Uint8Array> {
        for (let i = 0; i < 64; i++) yield chunk;
      }
      const res = await nodeFetch(`${base}/big`, { method: 'PUT', body: parts() as unknown as RequestInit['body'], duplex: 'half' } as RequestInit);
      expect((await res.text()).length).toBe('PUT  '.length + 64 * chunk.length);
      await new Promise((r) => setImmediate(r));
      expect(warnings.map((w) => w.message)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('answers a 404 as a Response would: not ok, the body readable as a web stream', async () => {
    const res = await nodeFetch(`${base}/missing`);
    expect(res.status).toBe(404);
    expect(res.ok).toBe(false);
    const reader = res.body!.getReader();
    let text = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    expect(text).toBe('GET  ');
    // A Response can be made from its parts (the SDK's download path does).
    expect(new Response('x', { headers: res.headers as unknown as Headers }).headers.get('x-many')).toBe('a, b');
  });

  it('sends many requests over one kept-alive connection', async () => {
    const before = connections.length;
    for (let i = 0; i < 20; i++) expect(await (await nodeFetch(`${base}/n${i}`, { method: 'POST', body: String(i) })).text()).toBe(`POST  ${i}`);
    expect(connections.length - before).toBeLessThanOrEqual(1);
  });

  it('refuses at once when the signal is already aborted, and rejects a refused connection as fetch does', async () => {
    await expect(nodeFetch(`${base}/x`, { signal: AbortSignal.abort() })).rejects.toThrow();
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await nodeFetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });

  it('speaks HTTPS to a remote instance, trusting what Node trusts (NODE_EXTRA_CA_CERTS) and refusing what it does not', async () => {
    const tls = join(import.meta.dirname, '..', 'support', 'tls');
    const secure = createTlsServer({ key: readFileSync(join(tls, 'localhost.key')), cert: readFileSync(join(tls, 'localhost.crt')) }, (req, res) => {
      req.resume();
      req.on('end', () => res.end(`secure ${req.method}`));
    });
    await new Promise<void>((r) => secure.listen(0, '127.0.0.1', r));
    try {
      const url = `https://127.0.0.1:${(secure.address() as AddressInfo).port}/v1/health`;
      const module = pathToFileURL(join(import.meta.dirname, '..', '..', 'dist', 'cli', 'node-fetch.js')).href;
      const script = `import { nodeFetch } from ${JSON.stringify(module)};
        try { process.stdout.write(await (await nodeFetch(${JSON.stringify(url)}, { method: 'POST', body: 'x' })).text()); }
        catch (e) { process.stdout.write('refused ' + (e.cause?.code ?? e.message)); }`;
      const run = (env: Record<string, string>) =>
        promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, ...env } });
      expect((await run({ NODE_EXTRA_CA_CERTS: join(tls, 'localhost.crt') })).stdout).toBe('secure POST');
      expect((await run({})).stdout).toMatch(/^refused .*SELF_SIGNED/);
    } finally {
      secure.closeAllConnections();
      await new Promise<void>((r) => secure.close(() => r()));
    }
  });

  it('follows no redirect: the SDK over it says where the service moved', async () => {
    const moved = createServer((req, res) => {
      req.resume();
      res.writeHead(301, { location: `https://records.example.com${req.url}` });
      res.end();
    });
    await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
    try {
      const baseUrl = `http://127.0.0.1:${(moved.address() as AddressInfo).port}/v1`;
      const err = await new SchemaClient({ baseUrl, apiKey: 'k', fetch: nodeFetch, retries: 0 }).records('deal').search().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceRequestError);
      expect(err).toMatchObject({ status: 301 });
      expect((err as Error).message).toContain('redirects to https://records.example.com/v1/records/deal/search');
    } finally {
      moved.closeAllConnections();
      await new Promise<void>((r) => moved.close(() => r()));
    }
  });

  it('a kept-alive idle connection does not keep a process running', async () => {
    const module = pathToFileURL(join(import.meta.dirname, '..', '..', 'dist', 'cli', 'node-fetch.js')).href;
    const script = `import { nodeFetch } from ${JSON.stringify(module)};
      const res = await nodeFetch(${JSON.stringify(`${base}/exit`)}, { method: 'POST', body: 'bye' });
      process.stdout.write(await res.text());`;
    const started = Date.now();
    // Not spawnSync: the server the child calls runs in this process.
    const r = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(r.stdout).toBe('POST  bye');
    // The server keeps the connection open (5 s by default): the child ended well before.
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});
