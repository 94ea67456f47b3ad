import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  INTERNAL_MESSAGE,
  ServiceError,
  THROTTLE_MESSAGE,
  VALIDATION_MESSAGE,
  statusForCode,
  type ErrorCode,
  type FieldError,
} from '../errors.js';
import { storeErrorKind } from '../store/open.js';
import { ajvErrorsToFieldErrors } from './validation.js';

/**
 * The response envelope (service-interface.md "Errors → Envelope", contract.md §3):
 * success `{ success: true, data, page? }`, failure
 * `{ success: false, statusCode, message, code?, errors? }`. This file is the only place
 * that shapes either, so every route and every framework failure answers alike.
 */
export interface Page {
  nextCursor: string | null;
  total?: number;
}

export interface ErrorBody {
  success: false;
  statusCode: number;
  message: string;
  code?: string;
  errors?: FieldError[];
}

export function ok<T>(data: T, page?: Page): { success: true; data: T; page?: Page } {
  return page === undefined ? { success: true, data } : { success: true, data, page };
}

/** 429 of the rate limiter: Errors rule 5 — same envelope, no code, fixed message. */
export class ThrottledError extends Error {
  constructor() {
    super(THROTTLE_MESSAGE);
    this.name = 'ThrottledError';
  }
}

/** Body parse / request validation failure (Envelope rule 1): 400, no code, `errors`. */
export class RequestValidationError extends Error {
  readonly errors: FieldError[];
  constructor(errors: FieldError[]) {
    super(VALIDATION_MESSAGE);
    this.name = 'RequestValidationError';
    this.errors = errors;
  }
}

/**
 * `errors` is "present only for body validation failure" (service-interface.md Envelope
 * table), i.e. only on a 400: a 404 unknown attribute or a 409 conflict carries its
 * field list in the log and the message, never in `errors`.
 */
export function errorBody(statusCode: number, message: string, code?: string, errors?: FieldError[]): ErrorBody {
  const body: ErrorBody = { success: false, statusCode, message };
  if (code !== undefined) body.code = code;
  if (statusCode === 400 && errors !== undefined && errors.length > 0) body.errors = errors;
  return body;
}

/**
 * The framework's own refusals (router, body reader, Node's HTTP parser) keep their 4xx
 * status; where the spec or the contract has a code for that status (408 SCHEMA_TIMEOUT,
 * 404 ROUTE_NOT_FOUND, 413 PAYLOAD_TOO_LARGE) it is found here by the status the one table
 * gives it. The rest (400 an unparseable request, 414, 431) are requests that could not be
 * read, answered like a body that could not be parsed: no code (Envelope rule 1).
 */
const FRAMEWORK_CODES = new Map<number, ErrorCode>(
  (['SCHEMA_TIMEOUT', 'ROUTE_NOT_FOUND', 'PAYLOAD_TOO_LARGE'] as const).map((code) => [statusForCode(code), code]),
);

export function frameworkErrorBody(status: number, message: string): ErrorBody {
  return errorBody(status, message, FRAMEWORK_CODES.get(status));
}

/** Fastify's messages echo the input (a 5,000-character path); these say it shortly. */
const FRAMEWORK_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_MAX_PARAM_LENGTH: 'A path segment is too long',
};

/**
 * A refusal raised by Fastify or one of its plugins (@fastify/error codes all start
 * FST_) carrying a 4xx status: the client's fault, so answered as such. A 5xx, or a 4xx on
 * anything else, stays a masked 500 below.
 */
function isFrameworkClientError(fe: Partial<FastifyError> | undefined): fe is FastifyError {
  return (
    typeof fe?.code === 'string' &&
    fe.code.startsWith('FST_') &&
    typeof fe.statusCode === 'number' &&
    fe.statusCode >= 400 &&
    fe.statusCode < 500
  );
}

/** Fastify framework codes that mean "the body could not be parsed" (Envelope rule 1). */
const PARSE_FAILURES = new Set([
  'FST_ERR_CTP_INVALID_JSON_BODY',
  'FST_ERR_CTP_EMPTY_JSON_BODY',
  'FST_ERR_CTP_INVALID_MEDIA_TYPE',
  'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
  'FST_ERR_CTP_EMPTY_TYPE',
  'FST_ERR_CTP_INVALID_TYPE',
]);

/**
 * Turn anything thrown into the envelope. Expected refusals are ServiceErrors (their status
 * comes from the one table in engine/errors.ts); everything else is a bug and answers a
 * masked 500, while the real cause goes to the log with the request id.
 */
export function toErrorBody(err: unknown, request: FastifyRequest): ErrorBody {
  if (err instanceof ServiceError) {
    if (err.status >= 500) {
      // Masked on the wire (Envelope: every 5xx message masked), kept in the log; the
      // request logger binds reqId itself (app.ts requestIdLogLabel), so it is not repeated.
      request.log.error({ code: err.code, err, details: err.details }, err.message);
      return errorBody(err.status, INTERNAL_MESSAGE, err.code);
    }
    return errorBody(err.status, err.message, err.code, err.details.errors);
  }
  if (err instanceof ThrottledError) return errorBody(429, THROTTLE_MESSAGE);
  if (err instanceof RequestValidationError) return errorBody(400, VALIDATION_MESSAGE, undefined, err.errors);
  const fe = err as Partial<FastifyError> & { body?: unknown };
  if (fe && Array.isArray(fe.validation)) {
    return errorBody(400, VALIDATION_MESSAGE, undefined, ajvErrorsToFieldErrors(fe.validation, fe.validationContext));
  }
  if (fe?.code === 'FST_ERR_BAD_URL') {
    // A URL that cannot be decoded names no route.
    return errorBody(statusForCode('ROUTE_NOT_FOUND'), 'Malformed URL: no route matches it', 'ROUTE_NOT_FOUND');
  }
  if (fe && typeof fe.code === 'string' && PARSE_FAILURES.has(fe.code)) {
    return errorBody(400, VALIDATION_MESSAGE, undefined, [{ path: [], message: parseMessage(fe) }]);
  }
  if (fe instanceof SyntaxError || (fe?.statusCode === 400 && typeof fe.message === 'string')) {
    // JSON.parse failures and secure-json-parse's prototype-poisoning refusal
    // ("Object contains forbidden prototype property") both land here.
    return errorBody(400, VALIDATION_MESSAGE, undefined, [{ path: [], message: parseMessage(fe) }]);
  }
  if (isFrameworkClientError(fe)) {
    // 413 body too large (PAYLOAD_TOO_LARGE), 414 a path segment past the router's limit…
    return frameworkErrorBody(fe.statusCode!, FRAMEWORK_MESSAGES[fe.code] ?? fe.message);
  }
  if (storeErrorKind(err) === 'unavailable') {
    // The database is down or refusing connections (issue 15 "Bad input and faults"): a
    // masked 503, which clients retry; the process stays up and the pool reconnects.
    request.log.error({ err }, 'database unavailable');
    return errorBody(503, INTERNAL_MESSAGE);
  }
  request.log.error({ err }, 'unhandled error');
  return errorBody(500, INTERNAL_MESSAGE);
}

function parseMessage(fe: Partial<FastifyError>): string {
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'body must be sent as application/json';
  if (fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return 'body must not be empty when content-type is application/json';
  const m = String(fe.message ?? 'body is not valid JSON');
  if (/prototype property/i.test(m)) return 'body contains a forbidden key (__proto__ or constructor.prototype)';
  return fe instanceof SyntaxError ? `body is not valid JSON: ${m}` : m;
}

export function sendError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const body = toErrorBody(err, request);
  return reply.code(body.statusCode).type('application/json; charset=utf-8').send(body);
}
