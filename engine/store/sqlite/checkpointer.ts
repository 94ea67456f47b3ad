import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { PUT_OFF_MS, type Db } from './database.js';

/**
 * WAL checkpoints off the request path, for a store that writes a lot.
 *
 * In WAL mode SQLite copies the log back into the database file (a checkpoint: a write per
 * page and two fsyncs) inside the COMMIT that takes the log past 1,000 pages. A bulk-create
 * of 10,000 records writes about that much, so every such request paid a whole checkpoint
 * in its own COMMIT, on the one thread that serves every request: 10–20 ms of a ~175 ms
 * request (test/bench/compare/cases.mjs bulk-http, measured with checkpoints off).
 *
 * Once a store's log has grown past that size (it is a heavy writer: most stores never
 * are, and pay nothing), a worker thread with a connection of its own copies it with PASSIVE
 * checkpoints (up to PASSES in a row), on the other core, when the writes pause or the log
 * has waited long enough (CheckpointTiming), and the store's own connection stops
 * checkpointing in its COMMITs but for the rare tail the worker could not reach (`tail`).
 * Correctness does not depend on it: a checkpoint by any
 * connection is an ordinary SQLite operation that never blocks or is blocked by writers
 * and readers (PASSIVE copies only what no reader still needs), and the log simply grows
 * until the next one. If the worker cannot start or dies, the store's connection goes back
 * to checkpointing in its COMMITs (SQLite's default). `stop()` ends the worker before the
 * store's connection closes, so that connection is the last one and removes the log.
 */

/** The log size that marks a heavy writer: SQLite's own checkpoint threshold (1,000 pages of 4 KiB). */
const START_BYTES = 1000 * 4096;
/**
 * When the worker copies the log: once the writes pause (no COMMIT by any connection between
 * two of its looks, `tickMs` apart), and under writes that do not pause, `busyMs` after the
 * first of them or once the log file passes `capBytes`, whichever comes first (PostgreSQL
 * checkpoints the same way, by time and by log size, with far larger bounds).
 *
 * Copying while the store writes costs the writes: each checkpoint that copies anything ends
 * in fsyncs, and its reads and writes take the disk and CPU the store's thread is using. A
 * push on 1,000 objects took a median 34 ms with a checkpoint every 20 ms, 31 every 100 ms and
 * 29 every 500 ms (8 alternated runs each); a 100,000-row `records import` with a checkpoint
 * every 500 ms against one after its writes (docs/performance.md, fourteenth round): 0.96× the
 * time. A burst's pages written by many of its transactions (an index's last pages, the
 * search index's segments) are also copied once, not once per cycle. The log of a burst is
 * bounded by `capBytes`, and by `busyMs` of writes.
 *
 * The worker runs at the store's priority. It ran at nice 10 when it copied on a fixed
 * cadence, to yield to the requests; now it waits for their pause itself, and what it copies
 * while they go on it copies to bound the log, which must not starve: with three CPU-bound
 * processes beside a steady writer, at nice 10 the log grew to 1.3 GB in 8 s and never
 * started over in 2 of 3 runs; at the same priority it started over within 0.7 s in 3 of 3.
 */
export interface CheckpointTiming {
  tickMs: number;
  busyMs: number;
  capBytes: number;
}
const TIMING: CheckpointTiming = { tickMs: 100, busyMs: PUT_OFF_MS, capBytes: 64 * 1024 * 1024 };
/** How often, at most, a COMMIT looks at the log's size (one stat call). */
const LOOK_MS = 250;
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;
/**
 * Where the store's COMMITs checkpoint until the worker runs: past START_BYTES, not at it.
 * At SQLite's 1,000 pages the COMMIT that took the log past START_BYTES copied it back itself
 * before this class looked, so every heavy writer paid one checkpoint inline (the second
 * 10,000-record bulk-create of a new store: COMMIT 30–46 ms, 6–14 ms after). The worker now
 * starts at the first look past START_BYTES (within LOOK_MS of crossing it); a COMMIT still
 * checkpoints if the log reaches four times that first, as SQLite would, only later.
 */
const AUTOCHECKPOINT_BEFORE_WORKER = 4 * SQLITE_DEFAULT_AUTOCHECKPOINT;

/**
 * The log file kept when SQLite starts the log over: a burst (a large import) may take it far
 * past this, and it is cut back to this size at the next start-over instead of staying at the
 * burst's size for the life of the store.
 */
const KEEP_BYTES = 4 * START_BYTES;

/** How many checkpoints in a row the worker runs to reach the log's end before it leaves the tail to the store. */
const PASSES = 4;
/**
 * How many ticks apart the worker looks while the store writes nothing (a server left idle
 * wakes its thread twice a second, not ten times).
 */
const IDLE_TICKS = 5;

// CommonJS, run by the worker (eval): better-sqlite3 is loaded from the path the store's
// own module resolved, so it is the same package wherever schemasync is installed.
// A checkpoint reports the log as it was when it began, so the worker checks again: a second
// pass that finds the same log means nothing was appended meanwhile, the log is copied to its
// end, and the next write starts it over. A writer that kept appending through PASSES passes
// leaves a tail: the worker says so, and the store's connection copies it (afterCommit).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.module);
const db = new Database(workerData.path, { fileMustExist: true });
const checkpoint = () => {
  let [r] = db.pragma('wal_checkpoint(PASSIVE)');
  for (let pass = 1; pass < workerData.passes && r && r.log > 0; pass++) {
    const [again] = db.pragma('wal_checkpoint(PASSIVE)');
    if (!again || again.log === r.log) return;
    r = again;
  }
  if (r && r.log > 0) parentPort.postMessage('tail');
};
// data_version changes when another connection (the store's, or another process's) has
// committed since this one last looked: the same value two ticks running is a pause. The
// worker starts because the log is long, so it starts as if writes were under way.
const { tickMs, busyMs, capBytes } = workerData.timing;
const version = db.prepare('PRAGMA data_version').pluck();
const logBytes = () => {
  try {
    return statSync(workerData.path + '-wal').size;
  } catch {
    return 0;
  }
};
let seen = version.get();
let writing = true;
let since = Date.now();
const tick = () => {
  const now = Date.now();
  const v = version.get();
  if (v === seen) {
    if (writing) {
      writing = false;
      checkpoint();
    }
    return;
  }
  seen = v;
  if (!writing) {
    writing = true;
    since = now;
  }
  // Counted from the end of the last checkpoint: one that took longer than busyMs (a loaded
  // machine) is not followed at once by the next, which would hold the checkpoint lock all
  // the time and keep the store from copying the tail.
  if (now - since >= busyMs || logBytes() >= capBytes) {
    checkpoint();
    since = Date.now();
  }
};
// Once the log is copied and nothing is written, a look IDLE_TICKS ticks apart: it only has to
// notice that writes began again (the time bound then counts from up to that much later).
let timer;
const next = () => {
  timer = setTimeout(() => {
    tick();
    next();
  }, writing ? tickMs : tickMs * workerData.idleTicks);
};
next();
parentPort.on('message', () => {
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

const betterSqlite3 = (): string => createRequire(import.meta.url).resolve('better-sqlite3');

export class Checkpointer {
  private worker: Worker | undefined;
  private off = false;
  private stopping = false;
  private nextLook = 0;
  /**
   * The worker's passes did not reach the log's end. SQLite starts the log over (writes from
   * its beginning again) only when a write transaction begins on a log copied back to its end.
   * Under steady writes a checkpoint on another thread never sees that end: frames are
   * appended while it copies, so the log grew without bound (3,300 single creates: 114 MB,
   * against 4 MB with SQLite's own checkpoints). So the store's connection copies the tail
   * right after its next COMMIT, when no write is under way: only the frames written during
   * the worker's last pass, and then the next write starts the log over.
   */
  private tail = false;

  constructor(
    private readonly db: Db,
    private readonly path: string,
    /** Tests shorten or lengthen it; the store runs with TIMING. */
    private readonly timing: CheckpointTiming = TIMING,
  ) {
    // An in-memory or temporary database has no log file to copy.
    this.off = path === '' || path === ':memory:' || path.startsWith('file::memory:');
    if (!this.off) {
      db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_BEFORE_WORKER}`);
      db.pragma(`journal_size_limit = ${KEEP_BYTES}`);
    }
  }

  /**
   * After a COMMIT: start the worker the first time the log is found past START_BYTES; once it
   * runs, copy back the tail its last checkpoint left (see `tail`).
   */
  afterCommit(): void {
    if (this.tail) {
      // After a COMMIT that landed: a checkpoint that fails (an I/O error) must not turn the
      // write into an error. The log then waits for the worker's next one. One that found
      // another checkpoint under way (the worker's: PASSIVE then copies nothing and says
      // busy) is tried again after the next COMMIT.
      try {
        const [r] = this.db.pragma('wal_checkpoint(PASSIVE)') as { busy: number }[];
        this.tail = r?.busy === 1;
      } catch {
        this.tail = false;
      }
      return;
    }
    if (this.worker !== undefined || this.off) return;
    const now = performance.now();
    if (now < this.nextLook) return;
    this.nextLook = now + LOOK_MS;
    let size: number;
    try {
      size = statSync(`${this.path}-wal`).size;
    } catch {
      return;
    }
    if (size >= START_BYTES) this.start();
  }

  private start(): void {
    let worker: Worker;
    try {
      worker = new Worker(WORKER, { eval: true, workerData: { module: betterSqlite3(), path: this.path, timing: this.timing, passes: PASSES, idleTicks: IDLE_TICKS } });
    } catch {
      this.commitsCheckpoint();
      return;
    }
    // The worker never keeps the process alive; close() ends it.
    worker.unref();
    worker.on('message', () => {
      this.tail = true;
    });
    worker.on('error', () => this.fallBack());
    worker.on('exit', () => this.fallBack());
    this.worker = worker;
    this.db.pragma('wal_autocheckpoint = 0');
  }

  /** The worker failed to open the database or died: the COMMITs checkpoint again. */
  private fallBack(): void {
    if (this.stopping || this.worker === undefined) return;
    this.worker = undefined;
    this.commitsCheckpoint();
  }

  /** No worker from here on: the store's COMMITs checkpoint as SQLite does by default. */
  private commitsCheckpoint(): void {
    this.off = true;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
  }

  /** Ends the worker and waits for its connection to close (before the store's own closes). */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.off = true;
    if (worker === undefined) return;
    this.stopping = true;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // Waited for: it keeps the process alive until its connection has closed.
    worker.ref();
    worker.postMessage('stop');
    await exited;
    this.worker = undefined;
  }

  /** Whether the worker runs (tests). */
  get running(): boolean {
    return this.worker !== undefined;
  }
}
