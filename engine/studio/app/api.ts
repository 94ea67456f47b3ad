import { session } from './session.js';

/**
 * Studio's client of the public HTTP API (contract.md §3), in the browser. It is not the
 * SDK (engine/sdk), which is built on Node streams and files; this one needs only fetch,
 * plus XMLHttpRequest for uploads because fetch reports no upload progress.
 */
export interface FieldError {
  path: (string | number)[];
  message: string;
}

/** A failed request, from the spec's envelope (service-interface.md "Errors → Envelope"). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly errors: FieldError[];
  constructor(status: number, message: string, code?: string, errors?: FieldError[]) {
    super(message);
    this.status = status;
    this.code = code;
    this.errors = errors ?? [];
  }
}

export interface Page {
  nextCursor: string | null;
  total?: number;
}

export interface Answer<T> {
  data: T;
  page: Page | undefined;
  etag: string | null;
}

const BASE = '/v1';

/** The server's envelope as an ApiError; anything else (a proxy's page, a dropped connection) said plainly. */
function toError(status: number, body: unknown): ApiError {
  const b = body as { message?: unknown; code?: unknown; errors?: unknown } | null;
  if (b && typeof b.message === 'string') {
    return new ApiError(status, b.message, typeof b.code === 'string' ? b.code : undefined, Array.isArray(b.errors) ? (b.errors as FieldError[]) : undefined);
  }
  return new ApiError(status, status === 0 ? 'Could not reach the server' : `The server answered ${status}`);
}

function authHeaders(): Record<string, string> {
  const key = session.get();
  return key ? { authorization: `Bearer ${key}` } : {};
}

export async function api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
  let response: Response;
  try {
    response = await fetch(BASE + path, {
      method,
      headers: { ...authHeaders(), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new ApiError(0, 'Could not reach the server');
  }
  const parsed: unknown = await response.json().catch(() => null);
  if (!response.ok) throw toError(response.status, parsed);
  const ok = parsed as { data: T; page?: Page };
  return { data: ok.data, page: ok.page, etag: response.headers.get('etag') };
}

/** A path segment, encoded, so a name or id can never add a segment of its own. */
export const seg = (value: string): string => encodeURIComponent(value);

/** Bytes of a file the key may read, for a download link. */
export async function fetchBlob(path: string): Promise<Blob> {
  const response = await fetch(BASE + path, { headers: authHeaders() }).catch(() => null);
  if (!response) throw new ApiError(0, 'Could not reach the server');
  if (!response.ok) throw toError(response.status, await response.json().catch(() => null));
  return response.blob();
}

/**
 * multipart upload with progress (issue 20: a progress bar). XMLHttpRequest because fetch
 * has no upload progress events; the answer goes through the same envelope handling.
 */
export function upload<T>(path: string, form: FormData, onProgress: (sent: number, total: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', BASE + path);
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.loaded, e.total);
    });
    xhr.addEventListener('load', () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        /* not JSON: reported by status */
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve((body as { data: T }).data);
      else reject(toError(xhr.status, body));
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, 'Could not reach the server')));
    xhr.send(form);
  });
}
