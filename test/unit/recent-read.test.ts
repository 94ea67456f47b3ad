import { describe, expect, it } from 'vitest';
import { RecentRead } from '../../engine/store/sql/recent-read.js';

// The keys version's reuse (engine/store/sql/store.ts keysVersion on PostgreSQL): the bound
// a revoke relies on ("stops working on every process within a second", issue 15).
describe('RecentRead', () => {
  const setup = () => {
    let clock = 1_000;
    let reads = 0;
    let value = 1;
    const pending: (() => void)[] = [];
    const recent = new RecentRead(
      500,
      () =>
        new Promise<number>((resolve) => {
          reads++;
          const v = value;
          pending.push(() => resolve(v));
        }),
      () => clock,
    );
    return {
      recent,
      reads: () => reads,
      set: (v: number) => void (value = v),
      tick: (ms: number) => void (clock += ms),
      answer: () => pending.splice(0).forEach((f) => f()),
      /** `get`, with any read it sends answered at once. */
      getNow(): Promise<number> {
        const value = recent.get();
        pending.splice(0).forEach((f) => f());
        return value;
      },
    };
  };

  it('reuses a read for at most its max age, counted from when the read was sent', async () => {
    const s = setup();
    expect(await s.getNow()).toBe(1);
    s.set(2); // committed elsewhere after the read was sent
    s.tick(500);
    expect(await s.recent.get()).toBe(1);
    expect(s.reads()).toBe(1);
    s.tick(1);
    expect(await s.getNow()).toBe(2);
    expect(s.reads()).toBe(2);
  });

  it('callers arriving while a read is in flight share it', async () => {
    const s = setup();
    const all = [s.recent.get(), s.recent.get(), s.recent.get()];
    s.tick(100);
    all.push(s.recent.get());
    s.answer();
    expect(await Promise.all(all)).toEqual([1, 1, 1, 1]);
    expect(s.reads()).toBe(1);
  });

  it('forget makes the next call read again (a change made through this process counts at once)', async () => {
    const s = setup();
    await s.getNow();
    s.set(7);
    s.recent.forget();
    expect(await s.getNow()).toBe(7);
    expect(s.reads()).toBe(2);
  });

  it('forgetAfter forgets once the write has settled, whether it committed or failed', async () => {
    const s = setup();
    await s.getNow();
    let finish!: () => void;
    const write = s.recent.forgetAfter(new Promise<void>((r) => (finish = r)));
    // Still in flight: the read from before it is reused.
    expect(await Promise.race([s.recent.get(), Promise.resolve('pending')])).toBe(1);
    expect(s.reads()).toBe(1);
    finish();
    await write;
    void s.recent.get();
    expect(s.reads()).toBe(2);
    await expect(s.recent.forgetAfter(Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    void s.recent.get();
    expect(s.reads()).toBe(3);
    s.answer();
  });

  it('does not keep a failed read', async () => {
    let fail = true;
    let reads = 0;
    const recent = new RecentRead(500, async () => {
      reads++;
      if (fail) throw new Error('database down');
      return 3;
    });
    await expect(recent.get()).rejects.toThrow('database down');
    fail = false;
    expect(await recent.get()).toBe(3);
    expect(reads).toBe(2);
  });
});
