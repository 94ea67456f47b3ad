import type { Db } from './database.js';
import { PUT_OFF_MS, writeTransaction } from './database.js';
import { classifySqliteError } from './driver.js';

/**
 * When FTS5 merges the search index's segments (fulltext.ts): once the writes pause, not
 * inside them.
 *
 * Every write transaction that adds to `_ss_fts` leaves one new segment (its terms, flushed
 * at COMMIT), and segments are merged as they pile up, so that a search reads a few large
 * ones rather than many small ones. FTS5 merges inside the writes by default (`automerge`:
 * each COMMIT does a share of merge work once a level holds that many segments). In a
 * 100,000-row import (1,000-row batches) that was half of the COMMITs' time and a tenth of
 * the server thread's: every entry was rewritten about twice while the import ran (automerge 8).
 *
 * So the writes only flush (`automerge` 0), and `IndexMerger` merges once the store has
 * committed nothing for `quietMs`: a step at a time (`'merge', pages`: about that many pages
 * written), each step its own short write transaction in the connection's queue, so a
 * request that arrives meanwhile waits for one step at most, until FTS5 reports nothing left
 * to merge (a level is merged once it holds `usermerge` segments). Writes that never pause
 * get one step every `busyMs`, and `crisismerge` bounds a level: the write that brings one to
 * that many segments merges it (a 100,000-row import makes 100 segments in ~1 s and reaches
 * neither).
 *
 * What unmerged segments cost a search: over 100,000 records, 100 segments answered as fast
 * as a merged index; 300 segments (300,000 records) took 10–25% longer for one word and ~3×
 * for two (13 ms against 4), which is why the merging is only put off, not dropped.
 *
 * The merging changes how the index is stored, never what it holds: a search finds the same
 * records before, during and after it. A step never waits for the write lock (`mergeStep`):
 * while another process holds it, the step is tried again after the next pause; every process
 * merging the same file merges the same structure, whichever gets there first.
 */

/** FTS5's merge settings, kept in the index (`_ss_fts_config`), given to an index that lacks them on open. */
export const MERGE_SETTINGS = { automerge: 0, crisismerge: 128, usermerge: 4 } as const;

/**
 * How long the writes must pause before merging (`quietMs`), the pages each step writes, and
 * how long writes that never pause may put merging off (`busyMs`): then one step runs anyway,
 * and another every `busyMs` while they go on.
 */
export interface MergeTiming {
  quietMs: number;
  pages: number;
  busyMs: number;
}

export const MERGE_TIMING: MergeTiming = { quietMs: 250, pages: 16, busyMs: PUT_OFF_MS };

/** Gives the index the merge settings it lacks; inside the caller's write transaction. */
export function applyMergeSettings(db: Db): void {
  const rows = db.prepare('SELECT k, v FROM _ss_fts_config').all() as { k: string; v: unknown }[];
  const current = new Map(rows.map((r) => [r.k, r.v]));
  for (const [k, v] of Object.entries(MERGE_SETTINGS)) {
    // Literals: FTS5 refuses a bound value in its configuration INSERT ("SQL logic error").
    if (current.get(k) !== v) db.exec(`INSERT INTO _ss_fts(_ss_fts, rank) VALUES ('${k}', ${v})`);
  }
}

/**
 * One merge step in a write transaction of its own: says whether FTS5 found work (it
 * changes two rows or more when it merged; fewer means nothing was left, fts5.html "merge").
 * It never waits for the write lock: merging can always come later, and a store call waits
 * on this thread while another process holds the lock (busy_timeout, database.ts), which
 * would stall every request for as long. Held elsewhere, it throws SQLITE_BUSY at once.
 */
export function mergeStep(db: Db, pages: number): boolean {
  const changes = db.prepare('SELECT total_changes() AS n').pluck();
  const wait = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma('busy_timeout = 0');
  try {
    return writeTransaction(db, () => {
      const before = changes.get() as number;
      db.exec(`INSERT INTO _ss_fts(_ss_fts, rank) VALUES ('merge', ${Math.trunc(pages)})`);
      return (changes.get() as number) - before >= 2;
    });
  } finally {
    db.pragma(`busy_timeout = ${wait}`);
  }
}

/**
 * The merging between writes: armed by every store COMMIT (and once on open, for what a
 * process left unmerged when it stopped), run once the writes have paused for `quietMs`, one
 * step per turn of the event loop in the connection's queue (`serial`: after whatever
 * transaction holds it). A commit in the middle puts the rest off to the next pause; writes
 * that never pause get one step every `busyMs` (~5 ms of every 2 s). The timer never keeps
 * the process alive; a closed connection is left alone.
 */
export class IndexMerger {
  private timer: NodeJS.Timeout | undefined;
  private lastWrite = -Infinity;
  /** Since when merging has been due and put off by writes (undefined: nothing put off). */
  private dueSince: number | undefined;

  constructor(
    private readonly db: Db,
    private readonly serial: (fn: () => boolean) => Promise<boolean>,
    private readonly timing: MergeTiming = MERGE_TIMING,
  ) {}

  afterCommit(): void {
    this.lastWrite = performance.now();
    this.dueSince ??= this.lastWrite;
    this.arm(Math.min(this.timing.quietMs, this.dueSince + this.timing.busyMs - this.lastWrite));
  }

  /** Merges what is there once the writes pause (on open). */
  soon(): void {
    this.arm(this.timing.quietMs);
  }

  private arm(ms: number): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.tick();
    }, ms);
    this.timer.unref();
  }

  private tick(): void {
    const now = performance.now();
    const quiet = now - this.lastWrite;
    // Writes that never pause: one step every busyMs, so tiny segments (a catch-up's every
    // 100 ms under steady single writes) do not pile up to the crisis bound between pauses.
    const overdue = this.dueSince !== undefined && now - this.dueSince >= this.timing.busyMs;
    if (quiet < this.timing.quietMs && !overdue) {
      const untilQuiet = this.timing.quietMs - quiet;
      const untilOverdue = this.dueSince === undefined ? Infinity : this.dueSince + this.timing.busyMs - now;
      return this.arm(Math.min(untilQuiet, untilOverdue));
    }
    if (overdue) this.dueSince = now;
    this.serial(() => this.db.open && mergeStep(this.db, this.timing.pages)).then(
      (more) => {
        if (more) this.arm(0);
        else if (performance.now() - this.lastWrite >= this.timing.quietMs) this.dueSince = undefined;
      },
      // Another process is writing: try again after the next pause. Any other failure (the
      // connection closing under it) leaves the merging to the next commit or open.
      (err: unknown) => {
        if (classifySqliteError(err) === 'busy') this.arm(this.timing.quietMs);
      },
    );
  }
}
