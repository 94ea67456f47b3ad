import type { RateCounter } from '../store/types.js';
import { ThrottledError } from './envelope.js';

/**
 * Per-IP, per-minute request budgets (service-interface.md "Limits", contract.md §3).
 * A fixed window per (bucket, ip), aligned to the clock's minutes, so every process sharing
 * a database counts into the same window (contract.md §8: the buckets hold across
 * processes). Deliberately no rate-limit or retry-after headers (Errors rule 5).
 */
export type Bucket = 'default' | 'upload' | 'search' | 'bulk' | 'ai';

export const DEFAULT_LIMITS: Readonly<Record<Bucket, number>> = {
  default: 100,
  upload: 20,
  search: 30,
  bulk: 10,
  ai: 5,
};

const RATE_WINDOW_MS = 60_000;

export interface RateLimiterOptions {
  limits?: Partial<Record<Bucket, number>>;
  now?: () => number;
  /**
   * Where the counts live: the store's shared counter when it has one (PostgreSQL: every
   * process counts into the same rows), else this process's memory (SQLite: one server per file).
   */
  counter?: RateCounter;
}

/**
 * The counts of one process, for a store without a shared counter. Synchronous, so the
 * SQLite server pays no promise per request for its limits.
 */
class MemoryRateCounter implements RateCounter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private lastSweep = 0;

  take(bucket: string, ip: string, windowStart: number): number {
    this.sweep(windowStart);
    const key = `${bucket}\u0000${ip}`;
    let w = this.windows.get(key);
    if (!w || w.start !== windowStart) {
      w = { start: windowStart, count: 0 };
      this.windows.set(key, w);
    }
    return ++w.count;
  }

  /** Drop past windows once a window, so many distinct IPs cannot grow the map forever. */
  private sweep(windowStart: number): void {
    if (windowStart === this.lastSweep) return;
    this.lastSweep = windowStart;
    for (const [key, w] of this.windows) if (w.start !== windowStart) this.windows.delete(key);
  }
}

export class RateLimiter {
  private readonly limits: Record<Bucket, number>;
  private readonly now: () => number;
  private readonly counter: RateCounter;

  constructor(options: RateLimiterOptions = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.now = options.now ?? Date.now;
    this.counter = options.counter ?? new MemoryRateCounter();
  }

  /**
   * Count one request; throws (or rejects with) ThrottledError (429) once the bucket's
   * budget is spent. Answers synchronously when the counter does (memory), a promise when
   * the count lives in the database.
   */
  hit(bucket: Bucket, ip: string): void | Promise<void> {
    const now = this.now();
    const windowStart = now - (now % RATE_WINDOW_MS);
    if (this.spent.size > 0 && this.isSpent(bucket, ip, windowStart)) throw new ThrottledError();
    const taken = this.counter.take(bucket, ip, windowStart);
    if (typeof taken === 'number') return this.check(bucket, taken);
    return taken.then((count) => {
      // A shared count only grows within its window: once this process has seen it over the
      // budget, it refuses that IP until the window ends without asking the database again,
      // so a flood costs the database one statement per process, not one per request.
      if (count > this.limits[bucket]) this.markSpent(bucket, ip, windowStart);
      this.check(bucket, count);
    });
  }

  /** (bucket, ip) pairs a shared counter has reported over budget, for the window in `spentWindow`. */
  private readonly spent = new Set<string>();
  private spentWindow = 0;

  private isSpent(bucket: Bucket, ip: string, windowStart: number): boolean {
    if (windowStart !== this.spentWindow) {
      this.spent.clear();
      return false;
    }
    return this.spent.has(`${bucket}\u0000${ip}`);
  }

  private markSpent(bucket: Bucket, ip: string, windowStart: number): void {
    if (windowStart !== this.spentWindow) {
      this.spent.clear();
      this.spentWindow = windowStart;
    }
    this.spent.add(`${bucket}\u0000${ip}`);
  }

  private check(bucket: Bucket, count: number): void {
    if (count > this.limits[bucket]) throw new ThrottledError();
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
