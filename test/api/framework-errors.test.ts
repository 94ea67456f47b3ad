import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH } from '../../engine/server/json-body.js';
import { expectError, logCapture, startTestServer, type TestServer } from './helpers.js';

// Refusals raised by the framework (router, body parser, Node's HTTP parser) answer in the
// envelope with an x-request-id, never a 500, and each gets one request log line.
const { lines, stream } = logCapture();
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ logger: { level: 'info', stream } });
  await s.defineObject('note', [{ name: 'meta', type: 'json' }]);
});
afterAll(async () => s.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The request log lines written for this answer's request id (after the response ends). */
async function logLinesOf(id: string | null): Promise<Record<string, unknown>[]> {
  await new Promise((r) => setTimeout(r, 20));
  return lines.filter((l) => l['reqId'] === id && l['msg'] === 'request');
}

/** One raw HTTP exchange: what the server wrote before it closed the socket. */
function rawExchange(request: string): Promise<string> {
  const url = new URL(s.base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let got = '';
    socket.on('data', (d) => (got += d.toString()));
    socket.on('error', reject);
    // Resolves only when the server closes the connection.
    socket.on('close', () => resolve(got));
    socket.setTimeout(5000, () => reject(new Error(`socket left open; got: ${got.slice(0, 300)}`)));
    socket.write(request);
  });
}

function parseRaw(raw: string): { status: number; headers: Record<string, string>; body: any } {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head!.split('\r\n');
  const headers: Record<string, string> = {};
  for (const h of headerLines) {
    const i = h.indexOf(':');
    headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n\r\n')) };
}

describe('long path segments', () => {
  const long = 'a'.repeat(101);

  it('a segment over 100 characters reaches the route: its own 404, not a 500', async () => {
    expectError(await s.call('GET', `/schema/objects/${long}`), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
    expectError(await s.call('GET', `/records/note/${long}`), { status: 404, code: 'SCHEMA_RECORD_NOT_FOUND' });
    expectError(await s.call('GET', `/records/${long}/${long}`), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
    // Without a key the route's guard answers first, as for any other id.
    expectError(await s.call('DELETE', `/keys/${long}`, { key: null }), { status: 403, code: 'SCHEMA_ACTOR_CONTEXT_REQUIRED' });
    // Lookup segments carry no length limit of their own: a name no object has is not found.
    expectError(await s.call('GET', `/schema/objects/${'a'.repeat(201)}`), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
  });

  it('a segment beyond even the router limit is a 414 in the envelope, logged once', async () => {
    const r = await s.call('GET', `/schema/objects/${'a'.repeat(5000)}`);
    expectError(r, { status: 414, code: undefined });
    expect(r.body.message).not.toContain('aaaa');
    const mine = await logLinesOf(r.headers.get('x-request-id'));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ method: 'GET', statusCode: 414 });
  });
});

describe('deeply nested bodies', () => {
  /** JSON text of arrays nested `depth` levels around `leaf` (built as text: too deep to stringify here). */
  const nest = (depth: number, leaf = '1'): string => '['.repeat(depth) + leaf + ']'.repeat(depth);
  const message = `body is nested more than ${MAX_BODY_DEPTH} levels deep`;

  it(`a body nested more than ${MAX_BODY_DEPTH} levels is 400 Validation failed, wherever it goes`, async () => {
    const deep = nest(5000);
    for (const [method, path, raw] of [
      ['POST', '/records/note', `{"meta":${deep}}`],
      ['POST', '/schema/objects/note/attributes', `{"name":"extra","type":"json","default":${deep}}`],
      ['PUT', '/schema/sources/crm', `{"declaration":{"objects":{"deal":{"attributes":{"x":{"type":"json","default":${deep}}}}}}}`],
    ] as const) {
      const r = await s.call(method, path, { raw });
      expectError(r, { status: 400, code: undefined, message: 'Validation failed', errors: true });
      expect(r.body.errors).toEqual([{ path: [], message }]);
    }
    // One level past the limit (the body object itself is level 1).
    const over = await s.call('POST', '/records/note', { raw: `{"meta":${nest(MAX_BODY_DEPTH)}}` });
    expect(over.body.errors).toEqual([{ path: [], message }]);
  });

  it('a body exactly at the limit is accepted and reads back; brackets inside strings do not count', async () => {
    const leaf = JSON.stringify('[[[[{{{{\\"]]');
    const r = await s.call('POST', '/records/note', { raw: `{"meta":${nest(MAX_BODY_DEPTH - 1, leaf)}}` });
    expect(r.status).toBe(201);
    const back = await s.call('GET', `/records/note/${r.body.data.id}`);
    expect(back.status).toBe(200);
    expect(back.text).toContain(`"meta":${nest(MAX_BODY_DEPTH - 1, leaf)}`);
  });
});

describe('client errors from the HTTP parser', () => {
  it('a 20 KB header is 431 in the envelope, with a request id, and the socket closes', async () => {
    const raw = await rawExchange(`GET /v1/health HTTP/1.1\r\nhost: x\r\nx-big: ${'b'.repeat(20 * 1024)}\r\n\r\n`);
    const r = parseRaw(raw);
    expect(r.status).toBe(431);
    expect(r.body).toEqual({ success: false, statusCode: 431, message: expect.any(String) });
    expect(r.headers['x-request-id']).toMatch(UUID);
    expect(r.headers['connection']).toBe('close');
    expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(r.body)));
    expect(await logLinesOf(r.headers['x-request-id']!)).toHaveLength(1);
  });

  it("a request that takes too long to arrive is 408 SCHEMA_TIMEOUT (the spec's code for 408), and the socket closes", async () => {
    // The same server with a 300 ms request timeout (5 minutes by default), checked every 50 ms.
    const slow = await startTestServer({ requestTimeout: { ms: 300, checkEveryMs: 50 } });
    try {
      const url = new URL(slow.base);
      const got = await new Promise<string>((resolve, reject) => {
        const client = connect(Number(url.port), url.hostname);
        let text = '';
        client.on('data', (d) => (text += d.toString()));
        client.on('error', reject);
        client.on('close', () => resolve(text));
        // Headers and the start of a body, then nothing more: a trickling client.
        client.write(`POST /v1/records/note HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${slow.ownerKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"meta":`);
      });
      const r = parseRaw(got);
      expect(r.status).toBe(408);
      expect(r.body).toEqual({ success: false, statusCode: 408, message: 'The request took too long to arrive', code: 'SCHEMA_TIMEOUT' });
      expect(r.headers['x-request-id']).toMatch(UUID);
    } finally {
      await slow.close();
    }
  });

  it('an unknown method is 400 in the envelope, with a request id', async () => {
    const r = parseRaw(await rawExchange('FOO /v1/health HTTP/1.1\r\nhost: x\r\n\r\n'));
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ success: false, statusCode: 400, message: expect.any(String) });
    expect(r.headers['x-request-id']).toMatch(UUID);
  });
});

describe('request log', () => {
  it('a malformed URL answered before routing still gets its one log line', async () => {
    const r = await s.call('GET', '/%');
    expectError(r, { status: 404, code: 'ROUTE_NOT_FOUND' });
    const mine = await logLinesOf(r.headers.get('x-request-id'));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ method: 'GET', url: '/v1/%', statusCode: 404 });
  });
});
