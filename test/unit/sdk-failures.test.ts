import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaClient, ServiceRequestError } from '../../engine/sdk/index.js';
import { within } from '../api/helpers.js';

/**
 * The SDK against small real HTTP servers on 127.0.0.1 that misbehave on purpose: answers
 * lost, bodies that stall or are cut off, downloads that never start. Bounds are generous
 * limits on hangs, not measurements.
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

const client = (baseUrl: string, extra: Partial<ConstructorParameters<typeof SchemaClient>[0]> = {}) =>
  new SchemaClient({ baseUrl, apiKey: 'k1', retryDelayMs: 1, ...extra });
const failure = (p: Promise<unknown>) => within(p.then(() => undefined, (e: unknown) => e), 10_000, 'the call') as Promise<ServiceRequestError>;

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
