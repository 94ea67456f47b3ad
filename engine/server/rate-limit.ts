import { ThrottledError } from './envelope.js';

/**
 * Per-IP, per-minute request budgets (service-interface.md "Limits", contract.md §3).
 * A fixed window per (bucket, ip): simple, O(1) per request, and it mirrors the hosted
 * throttler closely enough for clients to test their backoff against. Deliberately no
 * rate-limit or retry-after headers (Errors rule 5).
 */
export type Bucket = 'default' | 'upload' | 'search' | 'bulk' | 'ai';

export const DEFAULT_LIMITS: Readonly<Record<Bucket, number>> = {
  default: 100,
  upload: 20,
  search: 30,
  bulk: 10,
  ai: 5,
};

const WINDOW_MS = 60_000;

interface Window {
  start: number;
  count: number;
}

export interface RateLimiterOptions {
  limits?: Partial<Record<Bucket, number>>;
  now?: () => number;
}

export class RateLimiter {
  private readonly limits: Record<Bucket, number>;
  private readonly now: () => number;
  private readonly windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(options: RateLimiterOptions = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.now = options.now ?? Date.now;
  }

  /** Count one request; throws ThrottledError (429) once the bucket's budget is spent. */
  hit(bucket: Bucket, ip: string): void {
    const now = this.now();
    this.sweep(now);
    const key = `${bucket}\u0000${ip}`;
    let w = this.windows.get(key);
    if (!w || now - w.start >= WINDOW_MS) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    w.count++;
    if (w.count > this.limits[bucket]) throw new ThrottledError();
  }

  /** Drop expired windows once a minute, so many distinct IPs cannot grow the map forever. */
  private sweep(now: number): void {
    if (now - this.lastSweep < WINDOW_MS) return;
    this.lastSweep = now;
    for (const [key, w] of this.windows) if (now - w.start >= WINDOW_MS) this.windows.delete(key);
  }
}

/**
 * Which bucket a route counts in, from its method and URL pattern (Limits table).
 * `null`: exempt (PUT /schema/sources/:id, Limits rule 1; /health, contract.md §3).
 */
export function bucketFor(method: string, routeUrl: string | undefined): Bucket | null {
  const url = (routeUrl ?? '').replace(/^\/v1/, '');
  if (url === '/health') return null;
  // Studio's static page (contract.md §9): loading it must not eat the API budget its key needs.
  if (url === '/_' || url.startsWith('/_/')) return null;
  if (method === 'PUT' && url === '/schema/sources/:id') return null;
  if (/\/bulk-(create|update|delete)$/.test(url)) return 'bulk';
  if (url === '/search' || url === '/global-search') return 'search';
  if ((method === 'POST' && url.startsWith('/files')) || url.startsWith('/upload')) return 'upload';
  if (url.startsWith('/agent') || url.startsWith('/chat')) return 'ai';
  return 'default';
}
