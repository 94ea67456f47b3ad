import { describe, expect, it } from 'vitest';
import { createScheduler, type Clock } from '../../engine/watch/scheduler.js';

/** A hand-driven clock: time moves only when the test says so. */
function fakeClock() {
  let now = 0;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: Clock = {
    now: () => now,
    setTimeout(fn, ms) {
      const id = ++seq;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout(h) {
      timers.delete(h as number);
    },
  };
  async function advance(ms: number) {
    const end = now + ms;
    for (;;) {
      const next = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!next) break;
      timers.delete(next[0]);
      now = next[1].at;
      next[1].fn();
      await flush();
    }
    now = end;
    await flush();
  }
  return { clock, advance, pending: () => timers.size };
}

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** A job the test finishes by hand, recording start/finish order. */
function controlledJob() {
  const log: string[] = [];
  const finishers: (() => void)[] = [];
  let active = 0;
  let maxActive = 0;
  let state = 0;
  const seen: number[] = [];
  const run = () =>
    new Promise<void>((resolve) => {
      active++;
      maxActive = Math.max(maxActive, active);
      seen.push(state);
      log.push('start');
      finishers.push(() => {
        active--;
        log.push('finish');
        resolve();
      });
    });
  return {
    run,
    log,
    seen,
    set state(v: number) {
      state = v;
    },
    get maxActive() {
      return maxActive;
    },
    finish: async () => {
      finishers.shift()?.();
      await flush();
    },
  };
}

describe('scheduler', () => {
  it('collapses a burst of events into one run after the quiet period', async () => {
    const { clock, advance } = fakeClock();
    let runs = 0;
    const s = createScheduler({ debounceMs: 75, clock, run: async () => void runs++ });
    for (let i = 0; i < 20; i++) {
      s.schedule();
      await advance(10);
    }
    expect(runs).toBe(0);
    await advance(75);
    expect(runs).toBe(1);
    await advance(1000);
    expect(runs).toBe(1);
  });

  it('never runs twice at once; events during a run give exactly one more run with the latest state', async () => {
    const { clock, advance } = fakeClock();
    const job = controlledJob();
    const s = createScheduler({ debounceMs: 50, clock, run: job.run });
    job.state = 1;
    s.schedule();
    await advance(50);
    expect(job.log).toEqual(['start']);
    for (let v = 2; v <= 6; v++) {
      job.state = v;
      s.schedule();
      await advance(5);
    }
    await advance(500);
    expect(job.log).toEqual(['start']); // still the first run: no overlap
    await job.finish();
    await advance(50);
    expect(job.log).toEqual(['start', 'finish', 'start']);
    await job.finish();
    await advance(500);
    expect(job.log).toEqual(['start', 'finish', 'start', 'finish']);
    expect(job.seen).toEqual([1, 6]);
    expect(job.maxActive).toBe(1);
  });

  it('waits the quiet period after the last event that came during a run', async () => {
    const { clock, advance } = fakeClock();
    const job = controlledJob();
    const s = createScheduler({ debounceMs: 100, clock, run: job.run });
    s.schedule();
    await advance(100);
    s.schedule(); // at t=100, during the run
    await advance(30);
    await job.finish(); // run ends at t=130; rerun due at t=200
    await advance(60);
    expect(job.log).toEqual(['start', 'finish']);
    await advance(10);
    expect(job.log).toEqual(['start', 'finish', 'start']);
  });

  it('keeps going after a failing run and reports the error', async () => {
    const { clock, advance } = fakeClock();
    const errors: unknown[] = [];
    let n = 0;
    const s = createScheduler({
      debounceMs: 10,
      clock,
      run: async () => {
        n++;
        if (n === 1) throw new Error('boom');
      },
      onError: (e) => errors.push(e),
    });
    s.schedule();
    await advance(10);
    s.schedule();
    await advance(10);
    expect(n).toBe(2);
    expect(errors.map((e) => (e as Error).message)).toEqual(['boom']);
  });

  it('runNow skips the quiet period; close cancels what is pending and waits for the run', async () => {
    const { clock, advance, pending } = fakeClock();
    const job = controlledJob();
    const s = createScheduler({ debounceMs: 1000, clock, run: job.run });
    s.runNow();
    await advance(0);
    expect(job.log).toEqual(['start']);
    s.schedule();
    let closed = false;
    const closing = s.close().then(() => (closed = true));
    await flush();
    expect(closed).toBe(false);
    await job.finish();
    await closing;
    expect(closed).toBe(true);
    await advance(5000);
    expect(job.log).toEqual(['start', 'finish']);
    expect(pending()).toBe(0);
  });

  it('idle() resolves once nothing is pending or running', async () => {
    const { clock, advance } = fakeClock();
    const job = controlledJob();
    const s = createScheduler({ debounceMs: 20, clock, run: job.run });
    await s.idle();
    s.schedule();
    let idle = false;
    void s.idle().then(() => (idle = true));
    await advance(20);
    expect(idle).toBe(false);
    await job.finish();
    expect(idle).toBe(true);
    expect(s.runs).toBe(1);
  });
});
