import { randomUUID } from 'node:crypto';
import type { FieldError } from '../errors.js';
import { describeProblem, isWellFormed, storedValueProblems } from '../model/stored-values.js';
import { ServiceAuthError, ServiceRequestError } from './errors.js';

export interface ClientOptions {
  /** e.g. http://127.0.0.1:4400/v1 */
  baseUrl: string;
  apiKey?: string | undefined;
  /** Per attempt (connecting, headers, body); default 30 s. For files.download: the wait for the headers, then the longest pause in the body. */
  timeoutMs?: number;
  /** Extra attempts after the first on retryable failures; default 2. */
  retries?: number;
  /** First backoff delay; doubles per attempt, plus up to as much again of jitter. Default 200 ms. */
  retryDelayMs?: number;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** The body as JSON text already, instead of `body` (RecordsApi.bulkCreateUnanswered). */
  json?: string;
  headers?: Record<string, string>;
  /**
   * Safe to repeat: by default GET and PUT, and POSTs carrying an idempotency-key; read-only
   * POSTs say so here. A request with a version in `if-match` is never repeated, whatever
   * this says (see Transport.request).
   */
  idempotent?: boolean;
  /** Send an idempotency-key of our own so a POST becomes safe to retry (contract.md §3). */
  idempotencyKey?: string | true;
  /**
   * A body sent as-is instead of JSON (streamed multipart uploads, engine/sdk/files.ts).
   * A stream cannot be replayed, so such a request is never retried.
   */
  raw?: { body: AsyncIterable<Uint8Array> | Uint8Array | string; contentType: string; contentLength?: number };
  /**
   * The caller needs only the status and headers of a success: its body is read to the end
   * (so the connection is reused) and dropped, chunk by chunk, never held whole (`data` is
   * undefined). An import asks for a count (`Prefer: return=minimal`), but a service that does
   * not take the preference answers its 1,000 records again (~250 KB of JSON a batch), and
   * parsing that per batch would be most of what an import allocates.
   */
  discardSuccessBody?: boolean;
}

export interface Answer<T> {
  status: number;
  data: T;
  page?: { nextCursor: string | null; total?: number };
  headers: Headers;
  requestId: string | undefined;
}

/**
 * Codes whose 5xx answer is a decision, not a hiccup: repeating the request cannot
 * change it (contract.md §5: never retry CONFIGURATION_REQUIRED).
 */
const NO_RETRY_CODES: ReadonlySet<string> = new Set(['CONFIGURATION_REQUIRED', 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED', 'SCHEMA_ACCESS_DENIED']);

function retryableStatus(status: number, code: string | undefined): boolean {
  if (code !== undefined && NO_RETRY_CODES.has(code)) return false;
  return status === 408 || status === 429 || status >= 500;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * One name or id as a path segment, encoded. '', '.' and '..' (and anything that
 * percent-decodes to them) are refused before any request: `new URL()` resolves a `.`/`..`
 * segment (and its `%2E` spellings), so `records('..').get('keys')` would otherwise ask for
 * GET /v1/keys. The refusal is a ServiceRequestError with status 400 and
 * SCHEMA_VALIDATION_FAILED, what a service answers a malformed request with — not status 0,
 * which means the instance could not be reached.
 */
export function pathSegment(value: string, what: string): string {
  const raw = String(value);
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    /* not percent-encoded: the value as it is is what counts */
  }
  refuseIllFormed(raw, what);
  if ([raw, decoded].some((v) => v === '' || v === '.' || v === '..')) {
    throw new ServiceRequestError({
      status: 400,
      code: 'SCHEMA_VALIDATION_FAILED',
      message: `${what} ${JSON.stringify(raw)} cannot be sent: an empty, "." or ".." path segment would change the URL; nothing was sent.`,
    });
  }
  return encodeURIComponent(raw);
}

/**
 * A value the service would refuse (stored-values.ts: a string that is not well-formed
 * Unicode, a key that could reach a prototype) is refused here, before anything is sent,
 * with the message the service gives: sent, it would cost a round trip for a certain 400
 * (or, through `encodeURIComponent`, throw a bare URIError).
 */
export function refuseIllFormed(value: unknown, label: string): void {
  const found = storedValueProblems(value, 5);
  if (found.length === 0) return;
  const messages = found.map((p) => describeProblem(p, label));
  throw new ServiceRequestError({
    status: 400,
    code: 'SCHEMA_VALIDATION_FAILED',
    message: `${messages[0]}; nothing was sent.`,
    details: found.map((p, i) => ({ path: p.path, message: messages[i]! })),
  });
}

export class Transport {
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retries = options.retries ?? 2;
    this.retryDelayMs = options.retryDelayMs ?? 200;
    this.fetchImpl = options.fetch ?? globalThis.fetch;
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<Answer<T>> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (this.apiKey) headers['authorization'] = `Bearer ${this.apiKey}`;
    const json = options.json ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    if (json !== undefined) headers['content-type'] = 'application/json';
    // JSON.stringify writes an unpaired surrogate as a \uD8xx escape: the text says whether
    // a walk of the body is worth it (a 10,000-record bulk-create is not walked for nothing).
    // A body given as text is read back for the walk (escapes in it spell keys and strings
    // as well: `\u005f_proto__` is caught by the backslash), and so is one holding a lone
    // surrogate as such (fetch would send it as U+FFFD, a value nobody wrote).
    if (json !== undefined && (/\\u[dD][89a-fA-F]/.test(json) || json.includes('__proto__') || json.includes('"constructor"') || (options.json !== undefined && (json.includes('\\u') || !isWellFormed(json))))) {
      refuseIllFormed(options.json !== undefined ? JSON.parse(options.json) : options.body, '');
    }
    refuseIllFormed(options.headers ?? {}, 'headers');
    if (typeof options.idempotencyKey === 'string') refuseIllFormed(options.idempotencyKey, 'idempotency-key');
    if (options.idempotencyKey !== undefined) {
      headers['idempotency-key'] = options.idempotencyKey === true ? randomUUID() : options.idempotencyKey;
    }
    let idempotent = options.idempotent ?? (method === 'GET' || method === 'HEAD' || method === 'PUT' || headers['idempotency-key'] !== undefined);
    // A write conditional on a version is not safe to repeat: if the first answer is lost
    // after the write landed, the repeat meets the new version and answers 409 for a write
    // that succeeded (contract.md §5). `if-match: *` asks for no version, so it may repeat.
    const ifMatch = Object.entries(headers).find(([k]) => k.toLowerCase() === 'if-match')?.[1];
    if (ifMatch !== undefined && ifMatch.trim() !== '*') idempotent = false;
    // DELETE is sent once as well (not retried by default above): a repeat of a delete whose
    // answer was lost finds nothing and answers 404 for a delete that succeeded.
    let body: string | undefined | NonNullable<RequestOptions['raw']>['body'] = json;
    // A 429 means nothing was done (the limiter answers before any handler), so any request
    // whose body can be sent again may repeat after it, writes sent once included.
    const resendable = options.raw === undefined;
    if (options.raw !== undefined) {
      body = options.raw.body;
      headers['content-type'] = options.raw.contentType;
      if (options.raw.contentLength !== undefined) headers['content-length'] = String(options.raw.contentLength);
      idempotent = false;
    }

    for (let attempt = 0; ; attempt++) {
      const last = !idempotent || attempt >= this.retries;
      const throttledMayRepeat = resendable && attempt < this.retries;
      // The timeout covers the whole attempt: connecting, the headers and reading the body.
      const signal = AbortSignal.timeout(this.timeoutMs);
      let res: Response;
      let text: string;
      try {
        // `duplex: 'half'` lets fetch send a streamed body (raw uploads).
        const init = { method, headers, ...(body !== undefined ? { body: body as NonNullable<RequestInit['body']>, duplex: 'half' } : {}), signal };
        res = await this.fetchImpl(url, init as RequestInit);
        // A body that stalls or is cut off is a failed exchange, like a refused connection:
        // retried when the request may be, else status 0 — not a 200 "that is not JSON".
        if (options.discardSuccessBody && res.ok) {
          const reader = res.body?.getReader();
          if (reader) while (!(await reader.read()).done);
          return { status: res.status, data: undefined as T, headers: res.headers, requestId: res.headers.get('x-request-id') ?? undefined };
        }
        text = await res.text();
      } catch (cause) {
        if (!last) {
          await this.backoff(attempt);
          continue;
        }
        throw this.unreachable(cause);
      }
      const requestId = res.headers.get('x-request-id') ?? undefined;
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch (cause) {
        if (res.ok) throw new ServiceRequestError({ status: res.status, message: 'The service answered with a body that is not JSON', requestId, cause });
        parsed = undefined;
      }
      const env = (parsed ?? {}) as { success?: boolean; data?: T; page?: Answer<T>['page']; code?: string; message?: string; errors?: FieldError[] };
      if (res.ok) {
        return { status: res.status, data: env.data as T, ...(env.page ? { page: env.page } : {}), headers: res.headers, requestId };
      }
      const code = typeof env.code === 'string' ? env.code : undefined;
      if ((!last && retryableStatus(res.status, code)) || (res.status === 429 && throttledMayRepeat)) {
        await this.backoff(attempt);
        continue;
      }
      throw errorOf(res, text, env);
    }
  }

  /**
   * GET answering bytes rather than an envelope (GET /files/:id/content): a Response whose
   * body the caller streams; failures throw exactly as request() does. timeoutMs bounds the
   * wait for the headers (and for an error answer's body); after that it is an idle limit on
   * the body — no bytes for timeoutMs while the caller is reading errors the stream with a
   * status-0 ServiceRequestError — so a long download that keeps moving is never cut.
   */
  async download(path: string): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    const headers: Record<string, string> = this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.retries;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new DOMException('The download timed out', 'TimeoutError')), this.timeoutMs);
      let res: Response;
      try {
        res = await this.fetchImpl(url, { method: 'GET', headers, signal: controller.signal });
      } catch (cause) {
        clearTimeout(timer);
        if (!last) {
          await this.backoff(attempt);
          continue;
        }
        throw this.unreachable(cause);
      }
      if (res.ok) {
        clearTimeout(timer);
        return this.idleLimited(res, controller);
      }
      let text: string;
      try {
        text = await res.text();
      } catch (cause) {
        if (!last) {
          await this.backoff(attempt);
          continue;
        }
        throw this.unreachable(cause);
      } finally {
        clearTimeout(timer);
      }
      let env: { code?: string; message?: string; errors?: FieldError[] } = {};
      try {
        env = text === '' ? {} : (JSON.parse(text) as typeof env);
      } catch {
        env = {};
      }
      const code = typeof env.code === 'string' ? env.code : undefined;
      if (!last && retryableStatus(res.status, code)) {
        await this.backoff(attempt);
        continue;
      }
      throw errorOf(res, text, env);
    }
  }

  /** `res` with its body behind an idle timer: each wait for the next chunk may last timeoutMs. */
  private idleLimited(res: Response, controller: AbortController): Response {
    if (res.body === null) return res;
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      pull: async (out) => {
        const timer = setTimeout(() => controller.abort(new DOMException('The download stalled', 'TimeoutError')), this.timeoutMs);
        try {
          const { done, value } = await reader.read();
          if (done) out.close();
          else out.enqueue(value);
        } catch (cause) {
          out.error(this.unreachable(cause));
        } finally {
          clearTimeout(timer);
        }
      },
      cancel: async (reason) => {
        await reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  }

  /** Status 0 (contract.md §5): refused, reset, timed out, or the answer's body never completed. */
  private unreachable(cause: unknown): ServiceRequestError {
    return new ServiceRequestError({ status: 0, message: `Could not connect to ${this.baseUrl}`, cause });
  }

  private backoff(attempt: number): Promise<void> {
    const base = this.retryDelayMs * 2 ** attempt;
    return sleep(base + Math.random() * base);
  }
}

/** The envelope of a failed answer as the SDK's error (contract.md §5). */
function errorOf(res: Response, text: string, env: { code?: string; message?: string; errors?: FieldError[] }): ServiceRequestError {
  // A redirect reaches here only through a fetch that does not follow it (the CLI's,
  // cli/node-fetch.ts): say where to, since a moved base URL (http → https) is the usual cause.
  const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
  const init = {
    status: res.status,
    code: typeof env.code === 'string' ? env.code : undefined,
    message: location
      ? `The service redirects to ${location}; requests are not followed there: point the base URL at the new address`
      : typeof env.message === 'string' ? env.message : text.slice(0, 200) || res.statusText,
    requestId: res.headers.get('x-request-id') ?? undefined,
    details: Array.isArray(env.errors) ? env.errors : undefined,
  };
  return res.status === 401 || res.status === 403 ? new ServiceAuthError(init) : new ServiceRequestError(init);
}
