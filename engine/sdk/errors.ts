import type { FieldError } from '../errors.js';

/**
 * SDK failures (contract.md §5): every failed call is a ServiceRequestError carrying the
 * status, the spec code when the service sent one, its message and x-request-id; 401/403
 * are ServiceAuthError; a refused connection or timeout is status 0 with
 * `Could not connect to <base_url>`.
 */
export class ServiceRequestError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly requestId: string | undefined;
  /** The envelope's `errors` array, when present. */
  readonly details: FieldError[] | undefined;
  /** A one-line remedy the CLI prints under the error line. */
  hint: string | undefined;

  constructor(init: { status: number; message: string; code?: string | undefined; requestId?: string | undefined; details?: FieldError[] | undefined; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ServiceRequestError';
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details;
    this.hint = undefined;
  }
}

export class ServiceAuthError extends ServiceRequestError {
  constructor(init: ConstructorParameters<typeof ServiceRequestError>[0]) {
    super(init);
    this.name = 'ServiceAuthError';
  }
}
