/**
 * The one table of error code → HTTP status (service-interface.md "Error codes",
 * plus the codes contract.md §3 adds). The server, the SDK and the CLI all read
 * it; nothing else may hard-code a status for a code.
 */
export const ERROR_STATUS = {
  SCHEMA_VALIDATION_FAILED: 400,
  SCHEMA_INVALID_OBJECT_NAME: 400,
  SCHEMA_RESERVED_OBJECT_NAME: 400,
  SCHEMA_INVALID_ATTRIBUTE_NAME: 400,
  DOCUMENT_MIME_NOT_ACCEPTED: 400,
  DOCUMENT_MULTIPLE_NOT_ALLOWED: 400,
  DOCUMENT_FILE_TOO_LARGE: 400,
  AUTH_INVALID_API_KEY: 401,
  SCHEMA_FORBIDDEN: 403,
  SCHEMA_ACTOR_CONTEXT_REQUIRED: 403,
  SCHEMA_PROTECTED_OBJECT: 403,
  SCHEMA_PROTECTED_ATTRIBUTE: 403,
  SCHEMA_SYSTEM_ENTITY_IMMUTABLE: 403,
  SCHEMA_WORKSPACE_INVARIANT: 403,
  SCHEMA_RECORD_NOT_FOUND: 404,
  SCHEMA_OBJECT_NOT_FOUND: 404,
  SCHEMA_ATTRIBUTE_NOT_FOUND: 404,
  SCHEMA_SOURCE_NOT_FOUND: 404,
  SCHEMA_ROLE_NOT_FOUND: 404,
  SCHEMA_KEY_NOT_FOUND: 404,
  DOCUMENT_NOT_FOUND_FOR_OPERATION: 404,
  ROUTE_NOT_FOUND: 404,
  SCHEMA_TIMEOUT: 408,
  SCHEMA_DUPLICATE_OBJECT: 409,
  SCHEMA_DUPLICATE_ATTRIBUTE: 409,
  SCHEMA_DUPLICATE: 409,
  SCHEMA_CONFLICT: 409,
  SCHEMA_OBJECT_REFERENCED: 409,
  SCHEMA_SYNC_CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  SCHEMA_SYNC_FAILED: 500,
  SCHEMA_DESTRUCTIVE_NOT_ALLOWED: 500,
  SCHEMA_ACCESS_DENIED: 500,
  CONFIGURATION_REQUIRED: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** service-interface.md Errors rule 3: a code with no explicit mapping answers 500. */
export function statusForCode(code: string | undefined): number {
  if (code !== undefined && Object.hasOwn(ERROR_STATUS, code)) {
    return ERROR_STATUS[code as ErrorCode];
  }
  return 500;
}

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_STATUS, code);
}

/** service-interface.md Authentication rule 3 / contract.md §3: the one fixed sentence. */
export const FORBIDDEN_MESSAGE = 'You do not have permission to perform this action.';
/** Every 5xx message is masked to this text (service-interface.md Envelope). */
export const INTERNAL_MESSAGE = 'Internal server error';
/** Envelope rule 1: body parse / request validation failure. */
export const VALIDATION_MESSAGE = 'Validation failed';
/** Limits rule 2 / Errors rule 5. */
export const THROTTLE_MESSAGE = 'ThrottlerException: Too Many Requests';

/** One item of the envelope's `errors` array: where (a path into the body) and what. */
export interface FieldError {
  path: (string | number)[];
  message: string;
}

export interface ServiceErrorDetails {
  /** Per-field problems; rendered as the envelope's `errors`. */
  errors?: FieldError[];
  /** What the user can do about it (CLI prints it; never sent for masked 5xx). */
  fix?: string;
  /** Extra machine-readable facts (plan steps, sample ids…), never put in a 5xx body. */
  data?: unknown;
}

/**
 * The error every layer of the engine throws for an expected refusal. The status is
 * derived from the code, never given, so the table above stays the only mapping.
 */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ServiceErrorDetails;

  constructor(code: ErrorCode, message: string, details: ServiceErrorDetails = {}) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    this.status = statusForCode(code);
    this.details = details;
  }
}

export function forbidden(): ServiceError {
  return new ServiceError('SCHEMA_FORBIDDEN', FORBIDDEN_MESSAGE);
}
