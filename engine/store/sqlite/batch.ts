import type { Statement } from 'better-sqlite3';
import type { Param } from '../port.js';
import { multiRowInsert } from '../sql/multi-row-insert.js';

/** A bulk INSERT binds at most this many rows, and values, per statement (see runRows). */
const CHUNK_ROWS = 50;
const CHUNK_PARAMS = 999;

/** A prepared statement from the driver's cache (the batch's shapes are few and run again). */
export type StatementOf = (sql: string) => Statement;

/**
 * Executor.runBatch on SQLite. A bulk create's INSERT (sql/multi-row-insert.ts) goes as one
 * statement per CHUNK_ROWS rows: each `run` crosses from JS into SQLite once, binds, steps and
 * resets, and that per-call cost was about a fifth of a batch's inserts (100,000 rows of 10
 * columns in 1,000-row transactions: ~260 ms one by one, ~215 ms in chunks of 50; bulk-create
 * of 10,000 records over HTTP 150 → 140 ms). SQLite inserts a VALUES list's tuples in order, so
 * the rowids still follow the rows (fulltext-bulk.ts reads the batch as the rowids above the
 * table's largest before it). A failing chunk fails as a whole where one row did before: the
 * caller's transaction rolls back either way (port.ts runBatch). The rows after the last
 * whole chunk go one by one, and any other statement runs once per row.
 */
export function runRows(statement: StatementOf, sql: string, rows: Iterable<readonly Param[]>): { changes: number } {
  const one = statement(sql);
  const insert = insertOf(one, sql);
  let changes = 0;
  if (insert === undefined) {
    // Spread, not the array: better-sqlite3 binds positional arguments ~10% faster.
    for (const params of rows) changes += one.run(...params).changes;
    return { changes };
  }
  const { width, per } = insert;
  // Prepared (or found in the cache) at the first whole chunk: a single create never builds it.
  let many: Statement | undefined;
  // One array for every chunk (run() binds it before it returns), grown as rows come: a
  // single create fills one row of it.
  const flat: Param[] = [];
  let held = 0;
  const rest = (): void => {
    for (let r = 0; r < held; r++) changes += one.run(...flat.slice(r * width, (r + 1) * width)).changes;
    held = 0;
  };
  for (const params of rows) {
    // A row of another width is bound alone, so its error is better-sqlite3's own.
    if (params.length !== width) {
      rest();
      changes += one.run(...params).changes;
      continue;
    }
    const at = held * width;
    for (let i = 0; i < width; i++) flat[at + i] = params[i]!;
    if (++held === per) {
      many ??= statement(insert.chunk);
      changes += many.run(flat).changes;
      held = 0;
    }
  }
  rest();
  return { changes };
}

/** What a one-row statement is as a bulk INSERT, read once per prepared statement (a single create runs it too). */
const inserts = new WeakMap<Statement, { width: number; per: number; chunk: string } | null>();
function insertOf(one: Statement, sql: string): { width: number; per: number; chunk: string } | undefined {
  let known = inserts.get(one);
  if (known === undefined) {
    const insert = multiRowInsert(sql);
    const per = insert ? Math.max(1, Math.min(CHUNK_ROWS, Math.floor(CHUNK_PARAMS / insert.perRow))) : 0;
    known = insert && per > 1 ? { width: insert.perRow, per, chunk: insert.statement(per) } : null;
    inserts.set(one, known);
  }
  return known ?? undefined;
}
