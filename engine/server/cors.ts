import type { FastifyCorsOptions } from '@fastify/cors';

/**
 * Browser access (contract.md §3 "CORS"): which pages may call the server.
 * - `undefined` (the default): pages served from this machine, `http://localhost:<any port>`
 *   and `http://127.0.0.1:<any port>` (a dev server on :5173 calling the local server);
 * - `'*'`: any origin (`Access-Control-Allow-Origin: *`; keys travel in headers, never in
 *   cookies, so no credentials mode is needed);
 * - a list: exactly those origins.
 * A refused origin gets no `Access-Control-Allow-*` headers, so the browser blocks the call;
 * requests without an Origin (curl, the SDK, the CLI) are not affected at all.
 */
export type CorsOrigins = '*' | readonly string[];

const LOCAL_ORIGIN = /^http:\/\/(localhost|127\.0\.0\.1)(:\d{1,5})?$/;

/** Request headers a page may send: the key (either form), JSON bodies, the spec's conditional and idempotent writes, and a bulk write's `Prefer: return=minimal`. */
export const CORS_ALLOWED_HEADERS = ['authorization', 'x-api-key', 'content-type', 'if-match', 'idempotency-key', 'prefer', 'x-request-id'] as const;
/** Answer headers a page's script may read: the record version, the request id, and whether an answer was replayed or minimal. */
export const CORS_EXPOSED_HEADERS = ['etag', 'x-request-id', 'idempotent-replayed', 'preference-applied'] as const;

export function corsOptions(origins: CorsOrigins | undefined): FastifyCorsOptions {
  let origin: FastifyCorsOptions['origin'];
  if (origins === '*') origin = '*';
  else if (origins === undefined) origin = LOCAL_ORIGIN;
  else origin = [...origins];
  return {
    origin,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: [...CORS_ALLOWED_HEADERS],
    exposedHeaders: [...CORS_EXPOSED_HEADERS],
    // Browsers cache the answer (Chromium caps it at 2 hours): fewer preflights against the rate limit.
    maxAge: 600,
  };
}

/**
 * `--cors <origin,...>` as typed: `*`, or a comma-separated list of origins, each exactly
 * `scheme://host[:port]` (what a browser sends in Origin: no path, no trailing slash).
 * Returns the problem in words, or the origins.
 */
export function parseCorsOrigins(value: string): { origins: CorsOrigins } | { problem: string } {
  const trimmed = value.trim();
  if (trimmed === '*') return { origins: '*' };
  const list = trimmed.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  if (list.length === 0) return { problem: 'give * or a comma-separated list of origins such as http://localhost:5173' };
  for (const item of list) {
    let origin: string | undefined;
    try {
      const url = new URL(item);
      origin = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
    } catch {
      origin = undefined;
    }
    if (origin !== item) {
      return { problem: `"${item}" is not an origin: use scheme://host[:port] with no path or trailing slash, e.g. ${origin ?? 'http://localhost:5173'}` };
    }
  }
  return { origins: list };
}
