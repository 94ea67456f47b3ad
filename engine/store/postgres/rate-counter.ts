import type { Driver } from '../port.js';
import type { RateCounter } from '../types.js';

/**
 * The rate-limit buckets of every process on one PostgreSQL database (contract.md §3
 * "Rate limits", §8): one row per (bucket, client IP, minute), counted by one upsert per
 * request, on the `_ss_rate` table setup.ts creates.
 *
 * Concurrency: `INSERT … ON CONFLICT DO UPDATE` is atomic per row in PostgreSQL — of two
 * processes counting the same window at once, one inserts and the other's conflict waits
 * for it and increments the committed row — so no request goes uncounted and the count each
 * sees is exact. It runs as its own statement, outside any write transaction, so counting
 * never makes a record write retry; if the connection's default isolation is SERIALIZABLE
 * and the statement is refused as `busy`, it is simply run again.
 */
const TAKE = `INSERT INTO _ss_rate (bucket, ip, window_start, count) VALUES (?, ?, ?, 1)
ON CONFLICT (bucket, ip, window_start) DO UPDATE SET count = _ss_rate.count + 1
RETURNING count`;

/** Windows before the current one are never read again. */
const SWEEP = 'DELETE FROM _ss_rate WHERE window_start < ?';

const MAX_TRIES = 5;

export class PostgresRateCounter implements RateCounter {
  /** The window this process last swept up to: each process sweeps once per window. */
  private swept = 0;

  constructor(private readonly driver: Pick<Driver, 'get' | 'run' | 'classify'>) {}

  async take(bucket: string, ip: string, windowStart: number): Promise<number> {
    if (windowStart > this.swept) {
      this.swept = windowStart;
      // Not awaited by the request: a failed sweep leaves old rows for the next window's.
      this.driver.run(SWEEP, [windowStart]).catch(() => undefined);
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const row = await this.driver.get<{ count: number | string }>(TAKE, [bucket, ip, windowStart]);
        return Number(row?.count ?? 1);
      } catch (err) {
        if (attempt >= MAX_TRIES || this.driver.classify(err) !== 'busy') throw err;
      }
    }
  }
}
