import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from 'node:http';
import { Readable } from 'node:stream';

/**
 * The CLI's `fetch`: the SDK's requests (engine/sdk/transport.ts) over node:http(s) instead of
 * the global fetch. Why: the global fetch (undici) compiles its HTTP parser, WebAssembly, at a
 * process's first request — ~100 ms before the first byte is sent, in every command that talks
 * to a server (a one-row `records import` took ~225 ms, ~60 of them Node's own start). A
 * command is one short process, so it paid that every time; node:http's parser is native.
 * The SDK keeps the global fetch for everyone else (browsers, other runtimes, long processes).
 *
 * It covers what the transport asks of fetch, no more: a method, headers, a body that is a
 * string, bytes or an async iterable of bytes (a streamed upload), and an AbortSignal that
 * ends the exchange at any point (connecting, waiting for the headers, reading the body); the
 * answer's status, `ok`, headers, `text()` and `body` (a web ReadableStream). It follows no
 * redirects (the service sends none) and asks for no compression, so it decodes none.
 * Connections are kept alive between requests (an import sends one per batch): Node's global
 * agents keep them (since Node 19), and unref an idle one, so it never keeps the process running.
 */
export const nodeFetch = (async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  const send = url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  const options: RequestOptions = { method: init.method ?? 'GET', headers: plainHeaders(init.headers) };
  return new Promise<Response>((resolve, reject) => {
    const req: ClientRequest = send(url, options, (res) => resolve(answerOf(res) as unknown as Response));
    // Until the exchange is over, body included: the request closes after its answer has
    // been read to the end, and destroying it then errors the answer's stream as well.
    const abort = (): void => void req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal?.addEventListener('abort', abort, { once: true });
    req.once('close', () => signal?.removeEventListener('abort', abort));
    req.once('error', (cause) => reject(new TypeError('fetch failed', { cause })));
    writeBody(req, init.body).catch((cause: unknown) => req.destroy(cause instanceof Error ? cause : new Error(String(cause))));
  });
}) as typeof fetch;

function plainHeaders(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  const pairs: Iterable<[string, string]> = isIterable(headers) ? (headers as Iterable<[string, string]>) : Object.entries(headers as Record<string, string>);
  for (const [k, v] of pairs) out[k.toLowerCase()] = v;
  return out;
}

const isIterable = (v: unknown): v is Iterable<unknown> => typeof (v as { [Symbol.iterator]?: unknown })?.[Symbol.iterator] === 'function';

/** The request body: text and bytes with their length; a stream as it comes (chunked unless the caller gave a length). */
async function writeBody(req: ClientRequest, body: RequestInit['body'] | AsyncIterable<Uint8Array>): Promise<void> {
  if (body === undefined || body === null) {
    req.end();
    return;
  }
  if (typeof body === 'string' || body instanceof Uint8Array) {
    if (!req.hasHeader('content-length')) req.setHeader('content-length', Buffer.byteLength(body));
    req.end(body);
    return;
  }
  if (typeof (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] !== 'function') throw new TypeError('unsupported request body');
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    if (req.destroyed) return;
    if (!req.write(chunk)) await writable(req);
  }
  req.end();
}

/** Until the request may be written again, or is gone; leaves no listener behind (an upload waits thousands of times). */
function writable(req: ClientRequest): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      req.off('drain', done).off('close', done);
      resolve();
    };
    req.on('drain', done).on('close', done);
  });
}

/** The answer, shaped as much of a Response as the transport reads. */
function answerOf(res: IncomingMessage) {
  const status = res.statusCode ?? 0;
  let body: ReadableStream<Uint8Array> | undefined;
  return {
    status,
    statusText: res.statusMessage ?? '',
    ok: status >= 200 && status < 300,
    headers: new AnswerHeaders(res.headers),
    get body(): ReadableStream<Uint8Array> {
      return (body ??= Readable.toWeb(res) as ReadableStream<Uint8Array>);
    },
    async text(): Promise<string> {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/** The answer's headers, read as a Headers is (case-insensitive `get`, iterable as pairs). */
class AnswerHeaders {
  constructor(private readonly raw: IncomingHttpHeaders) {}
  get(name: string): string | null {
    const v = this.raw[name.toLowerCase()];
    return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
  }
  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }
  *entries(): IterableIterator<[string, string]> {
    for (const name of Object.keys(this.raw).sort()) yield [name, this.get(name)!];
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
  forEach(fn: (value: string, name: string) => void): void {
    for (const [name, value] of this.entries()) fn(value, name);
  }
}
