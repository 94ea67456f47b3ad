import type { Db } from './database.js';
import { writeTransaction } from './database.js';
import type { Prepare } from './fulltext.js';

/**
 * Rows written one at a time reach FTS5 late, and every search waits for them.
 *
 * Why. FTS5 keeps the terms a transaction adds in memory and writes them out as a new segment
 * at COMMIT (and at every SAVEPOINT it is part of), then merges segments as they pile up. For
 * a one-record write that flush is most of what the index costs: a one-record create commits
 * in ~25 µs without the index and ~92 µs with it (the trigger ~12 µs, the flush ~55 µs), so a
 * server taking single creates spent ~40 µs of every create on segments of one or two rows.
 * The per-row triggers (record and document writes) therefore write the `_ss_search` row in
 * the write's transaction, as before, and mark its id in `_ss_search_pending` instead of adding
 * the FTS5 entry; `addPending` adds the entries of every marked row in one pass (one segment for
 * however many rows) and clears the marks.
 *
 * What a reader sees stays exact. The only reader of `_ss_fts` is a search
 * (fulltext-query.ts), and the backend's search catches up first (`catchUp`, in the search's
 * turn on the connection's queue: nothing commits in between in this process), so a search
 * finds every record committed before it, and a rolled-back write never marked anything (the
 * marks are rows of its transaction). Another process's marks are rows of the same file and are
 * caught up by whichever process searches next. Between searches the marks are caught up when
 * writes pause (`PendingIndex`), so the file is fully indexed soon after the last write and a
 * search after a burst of writes has little to do.
 *
 * Removing a row (a record's delete or update, a document's): its FTS5 entry is deleted only
 * if it has one (an external-content index must never be told to delete what it does not
 * hold), and its mark goes with it (fulltext.ts `removeRows`). Set-based passes (a bulk write,
 * a rebuild after a schema change, the build on open) add their entries at once, as before:
 * they pay one flush for the whole batch anyway, and the bulk pass takes the marked rows along.
 */
export const PENDING_TABLE_SQL = 'CREATE TABLE _ss_search_pending (id INTEGER PRIMARY KEY) STRICT;';

/** Marks the `_ss_search` rows `where` selects (just written) as waiting for their FTS5 entries. */
export const markPending = (where: string): string => `INSERT INTO _ss_search_pending(id) SELECT id FROM _ss_search WHERE ${where}`;

/** Of the `_ss_search` rows, those that have their FTS5 entry (a condition over `id`). */
export const INDEXED = 'id NOT IN (SELECT id FROM _ss_search_pending)';

/** Drops the marks of the `_ss_search` rows `where` selects (the rows are about to go). */
export const unmarkPending = (where: string): string => `DELETE FROM _ss_search_pending WHERE id IN (SELECT id FROM _ss_search WHERE ${where})`;

const ANY = 'SELECT 1 AS x FROM _ss_search_pending LIMIT 1';
// In id order: FTS5 writes its pending terms out whenever a rowid does not ascend.
const ADD = 'INSERT INTO _ss_fts(rowid, text) SELECT s.id, s.text FROM _ss_search_pending p JOIN _ss_search s ON s.id = p.id ORDER BY p.id';
const CLEAR = 'DELETE FROM _ss_search_pending';

/** Inside the caller's write transaction: every marked row's FTS5 entry added, the marks cleared. Says whether there were any. */
export function addPending(prepare: Prepare): boolean {
  if (prepare(ANY).get() === undefined) return false;
  prepare(ADD).run();
  prepare(CLEAR).run();
  return true;
}

/**
 * Before a search, on the connection's turn: the marked rows indexed in a write transaction of
 * their own (or, inside the caller's transaction, in a savepoint of it). One indexed read when
 * there are none, the common case.
 */
export function catchUp(db: Db, prepare: Prepare): void {
  if (prepare(ANY).get() === undefined) return;
  writeTransaction(db, () => addPending(prepare));
}

/**
 * How long after a commit the marks are caught up without a search. Under a steady stream of
 * single writes that is one FTS5 segment per this many milliseconds instead of one per
 * transaction; a search in between catches up itself.
 */
export const CATCH_UP_DELAY_MS = 100;

/**
 * The catch-up between searches: armed by a commit, run once the delay has passed, in the
 * connection's queue (`serial`: after whatever transaction holds it). Its failure is left for
 * the next search, which catches up again and reports any error itself; a closed connection
 * is left alone. The timer never keeps the process alive.
 */
export class PendingIndex {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly serial: (fn: () => void) => Promise<void>,
    private readonly run: () => void,
  ) {}

  afterCommit(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.serial(() => {
        if (this.db.open) this.run();
      }).catch(() => undefined);
    }, CATCH_UP_DELAY_MS);
    this.timer.unref();
  }
}
