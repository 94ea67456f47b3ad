/**
 * A single-flight, debounced runner: the heart of watch mode (issue 6: "bursts debounced,
 * one sync per burst, never two syncs at once, the latest state always wins").
 *
 * - `schedule()` on every file event; the job runs after `debounceMs` without events.
 * - Never two runs at once. An event during a run marks the scheduler dirty; once the run
 *   finishes it runs again (once, however many events came), after the same quiet time
 *   measured from the last event. The job reads the files itself, so that second run sees
 *   the latest state and every burst collapses into one run.
 * - A job that throws is reported through `onError` and does not stop the scheduler.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface SchedulerOptions {
  debounceMs: number;
  run: () => Promise<void>;
  onError?: (err: unknown) => void;
  clock?: Clock;
}

export interface Scheduler {
  /** A file changed: (re)start the quiet period, or mark dirty while a run is going. */
  schedule(): void;
  /** Run as soon as no run is in flight, skipping the quiet period (first sync, retries). */
  runNow(): void;
  /** Resolves when nothing is pending and nothing is running. */
  idle(): Promise<void>;
  /** Cancels what is pending and waits for the run in flight; later calls do nothing. */
  close(): Promise<void>;
  readonly running: boolean;
  /** How many runs have started. */
  readonly runs: number;
}

const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export function createScheduler(options: SchedulerOptions): Scheduler {
  const clock = options.clock ?? realClock;
  const debounceMs = Math.max(0, options.debounceMs);
  let timer: unknown = undefined;
  let running = false;
  let dirty = false;
  let closed = false;
  let lastEvent = 0;
  let runs = 0;
  let current: Promise<void> | undefined;
  let idleWaiters: (() => void)[] = [];

  const settleIdle = () => {
    if (running || timer !== undefined) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  };

  const arm = (delay: number) => {
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = clock.setTimeout(fire, Math.max(0, delay));
  };

  function fire(): void {
    timer = undefined;
    if (closed) return settleIdle();
    if (running) {
      dirty = true;
      return;
    }
    running = true;
    dirty = false;
    runs++;
    current = (async () => {
      try {
        await options.run();
      } catch (err) {
        options.onError?.(err);
      } finally {
        running = false;
        current = undefined;
        if (dirty && !closed) {
          dirty = false;
          // The quiet period counts from the last event, so a burst that straddled the run
          // is still collapsed into one more run.
          arm(lastEvent + debounceMs - clock.now());
        }
        settleIdle();
      }
    })();
  }

  return {
    schedule() {
      if (closed) return;
      lastEvent = clock.now();
      if (running) {
        dirty = true;
        return;
      }
      arm(debounceMs);
    },
    runNow() {
      if (closed) return;
      if (running) {
        dirty = true;
        lastEvent = clock.now() - debounceMs;
        return;
      }
      arm(0);
    },
    idle() {
      if (!running && timer === undefined) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    async close() {
      closed = true;
      if (timer !== undefined) {
        clock.clearTimeout(timer);
        timer = undefined;
      }
      if (current) await current;
      settleIdle();
    },
    get running() {
      return running;
    },
    get runs() {
      return runs;
    },
  };
}
