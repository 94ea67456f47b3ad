import type { Db } from './database.js';
import { writeTransaction } from './database.js';
import type { Prepare } from './fulltext.js';
import { intColumn } from '../sql/rows.js';

/**
 * Single writes reach FTS5 late, and every search waits for them.
 *
 * Why. FTS5 keeps the terms a transaction adds or deletes in memory and writes them out as a
 * new segment at COMMIT (and at every SAVEPOINT it is part of), then merges segments as they
 * pile up. For a one-record write that flush is most of what the index costs: a one-record
 * create commits in ~25 µs without the index and ~92 µs with it (the trigger ~12 µs, the flush
 * ~55 µs), so a server taking single creates spent ~40 µs of every create on segments of one
 * or two rows, and an update of indexed text paid the same for its delete and insert. So the
 * index's writers keep `_ss_search` (the indexed text) exact in the write's transaction, as
 * before, and leave FTS5's side in two small tables instead:
 * - `_ss_search_pending`: the ids of rows written but not yet added to FTS5 (the per-row
 *   triggers, record and document, mark what they write: `markPending`);
 * - `_ss_search_gone`: the id and text of FTS5 entries whose row was removed (or is being
 *   rewritten) and that FTS5 still holds (`forgetRows`: an external-content index is told
 *   the text it indexed to delete an entry, and the row that held it is gone by then).
 * `addWaiting` applies both in one pass — the deletions first, then the additions, each in
 * id order — and empties them: one segment for however many writes.
 *
 * What a reader sees stays exact. The only reader of `_ss_fts` is a search
 * (fulltext-query.ts), and the backend's search catches up first (`catchUp`, in the search's
 * turn on the connection's queue: nothing commits in between in this process), so a search
 * finds every record as committed before it and nothing removed, and a rolled-back write
 * left nothing waiting (the rows of both tables are rows of its transaction). Another
 * process's waiting rows are rows of the same file, caught up by whichever process searches
 * next. Between searches they are caught up 100 ms after a commit (`PendingIndex`: at most one
 * pass per 100 ms under a steady stream of writes), so the file is fully indexed soon after the
 * last write and a search has little to do.
 *
 * Why an entry is never deleted twice or added twice: a row is in FTS5 (and so may go to
 * `_ss_search_gone`) only if it is not marked pending (`INDEXED`); a row that is removed while
 * marked just loses its mark. Every pass that adds FTS5 entries directly (a bulk write's,
 * a rebuild's: fulltext.ts `indexRows`) applies what is waiting first, so an id's old entry
 * is deleted before a new one is added under it, and `_ss_search_gone` holds an id at most
 * once (it fills only from indexed rows, and a row becomes indexed only after it was emptied).
 */
export const PENDING_TABLES_SQL = `CREATE TABLE _ss_search_pending (id INTEGER PRIMARY KEY) STRICT;
CREATE TABLE _ss_search_gone (id INTEGER PRIMARY KEY, text TEXT NOT NULL) STRICT;`;
export const PENDING_TABLES = ['_ss_search_pending', '_ss_search_gone'];

/** Marks the `_ss_search` rows `where` selects (just written) as waiting for their FTS5 entries. */
export const markPending = (where: string): string => `INSERT INTO _ss_search_pending(id) SELECT id FROM _ss_search WHERE ${where}`;

/** Of the `_ss_search` rows, those that have their FTS5 entry (a condition over `id`). */
const INDEXED = 'id NOT IN (SELECT id FROM _ss_search_pending)';

/**
 * Before the `_ss_search` rows `where` selects are deleted: the FTS5 entries of those that have
 * one are left to delete (with the text they were indexed with), the marks of the others go.
 * Each statement names `where` once, so both take the caller's parameters.
 */
export const forgetRows = (where: string): string[] => [
  `INSERT INTO _ss_search_gone(id, text) SELECT id, text FROM _ss_search WHERE (${where}) AND ${INDEXED}`,
  `DELETE FROM _ss_search_pending WHERE id IN (SELECT id FROM _ss_search WHERE ${where})`,
];

const ANY = 'SELECT EXISTS (SELECT 1 FROM _ss_search_pending) OR EXISTS (SELECT 1 FROM _ss_search_gone) AS waiting';
// In id order: FTS5 writes its in-memory terms out whenever a rowid does not ascend.
const APPLY = [
  "INSERT INTO _ss_fts(_ss_fts, rowid, text) SELECT 'delete', id, text FROM _ss_search_gone ORDER BY id",
  'DELETE FROM _ss_search_gone',
  'INSERT INTO _ss_fts(rowid, text) SELECT s.id, s.text FROM _ss_search_pending p JOIN _ss_search s ON s.id = p.id ORDER BY p.id',
  'DELETE FROM _ss_search_pending',
];

const waiting = (prepare: Prepare): boolean => intColumn(prepare(ANY).get(), 'waiting') === 1;

/** Inside the caller's write transaction: what is waiting applied to FTS5 and cleared. Says whether anything was. */
export function addWaiting(prepare: Prepare): boolean {
  if (!waiting(prepare)) return false;
  for (const sql of APPLY) prepare(sql).run();
  return true;
}

/**
 * Before a search, on the connection's turn: what is waiting applied in a write transaction of
 * its own (or, inside the caller's transaction, in a savepoint of it). One read of two empty
 * tables when nothing is, the common case.
 */
export function catchUp(db: Db, prepare: Prepare): void {
  if (!waiting(prepare)) return;
  writeTransaction(db, () => addWaiting(prepare));
}

/**
 * How long after a commit what is waiting is applied without a search. Under a steady stream
 * of single writes that is one FTS5 segment per this many milliseconds instead of one per
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
