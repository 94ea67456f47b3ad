import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../engine/server/rate-limit.js';
import { PostgresDriver } from '../../engine/store/postgres/driver.js';
import { PostgresRateCounter } from '../../engine/store/postgres/rate-counter.js';
import { setupDatabase } from '../../engine/store/postgres/setup.js';
import { createTestDatabase } from '../support/postgres-db.js';

/**
 * The shared rate-limit buckets (contract.md §3 "Rate limits", §8) on the run's real
 * PostgreSQL: three pools stand for three `serve` processes counting one client IP at once.
 */
let drivers: PostgresDriver[] = [];
let drop: () => Promise<void>;

beforeAll(async () => {
  const db = await createTestDatabase('rate');
  drop = db.drop;
  drivers = [0, 1, 2].map(() => new PostgresDriver({ url: db.url, max: 4 }));
  await drivers[0]!.transaction((tx) => setupDatabase(tx));
});
afterAll(async () => {
  await Promise.all(drivers.map((d) => d.close()));
  await drop();
});

describe('PostgresRateCounter', () => {
  it('counts every request of three processes exactly once: 150 concurrent takes answer 1..150', async () => {
    const counters = drivers.map((d) => new PostgresRateCounter(d));
    const window = 60_000 * 1_000;
    const counts = await Promise.all(Array.from({ length: 150 }, (_, i) => counters[i % 3]!.take('default', '10.0.0.1', window)));
    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
    // Another IP and another bucket have their own counts.
    expect(await counters[0]!.take('default', '10.0.0.2', window)).toBe(1);
    expect(await counters[1]!.take('bulk', '10.0.0.1', window)).toBe(1);
  });

  it('a new window starts from 1, and windows before it are swept', async () => {
    const counter = new PostgresRateCounter(drivers[0]!);
    const w1 = 60_000 * 2_000;
    await counter.take('search', '10.0.0.9', w1);
    expect(await counter.take('search', '10.0.0.9', w1)).toBe(2);
    expect(await counter.take('search', '10.0.0.9', w1 + 60_000)).toBe(1);
    // The sweep is not awaited by the request: give it a moment.
    await expect.poll(async () => (await drivers[1]!.get<{ n: number }>('SELECT count(*) AS n FROM _ss_rate WHERE window_start < ?', [w1 + 60_000]))?.n, { timeout: 5_000 }).toBe(0);
  });

  it('limits three processes to one budget: of 30 search requests across them, exactly 30 pass and the other 15 get 429', async () => {
    let now = 60_000 * 3_000 + 5;
    const limiters = drivers.map((d) => new RateLimiter({ counter: new PostgresRateCounter(d), now: () => now }));
    const outcomes = await Promise.all(
      Array.from({ length: 45 }, async (_, i) => {
        try {
          await limiters[i % 3]!.hit('search', '10.1.1.1');
          return 'ok';
        } catch (err) {
          return (err as Error).constructor.name;
        }
      }),
    );
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(30);
    expect(outcomes.filter((o) => o === 'ThrottledError')).toHaveLength(15);
    now += 60_000;
    await expect(Promise.resolve(limiters[2]!.hit('search', '10.1.1.1'))).resolves.toBeUndefined();
  });

  it('a process that has seen an IP over budget refuses it without asking the database again until the window ends', async () => {
    let now = 60_000 * 4_000 + 5;
    const limiter = new RateLimiter({ counter: new PostgresRateCounter(drivers[0]!), now: () => now });
    const stored = async () => Number((await drivers[1]!.get<{ count: number }>("SELECT count FROM _ss_rate WHERE bucket = 'ai' AND ip = '10.2.2.2' AND window_start = ?", [now - (now % 60_000)]))?.count ?? 0);
    const outcome = async () => {
      try {
        await limiter.hit('ai', '10.2.2.2');
        return 'ok';
      } catch (err) {
        return (err as Error).constructor.name;
      }
    };
    for (let i = 0; i < 5; i++) expect(await outcome()).toBe('ok');
    expect(await outcome()).toBe('ThrottledError');
    expect(await stored()).toBe(6);
    for (let i = 0; i < 20; i++) expect(await outcome()).toBe('ThrottledError');
    expect(await stored()).toBe(6);
    now += 60_000;
    expect(await outcome()).toBe('ok');
    expect(await stored()).toBe(1);
  });
});
