import type { Param } from '../port.js';
import { multiRowInsert } from '../sql/multi-row-insert.js';

// Executor.runBatch's INSERT … VALUES on PostgreSQL (driver.ts): the rows of a batch in chunks,
// each one statement.

/** Rows per multi-row INSERT: PostgreSQL binds at most 65,535 parameters per statement. */
const MAX_PARAMS = 60_000;
const MAX_ROWS = 1000;

/**
 * The shared bulk-create statement (sql/multi-row-insert.ts) as PostgreSQL runs a chunk of it:
 * `statement(n)` with n value tuples, or `fromJson` reading the rows from one JSON parameter
 * (asJsonRows). undefined for any other statement.
 *
 * Why JSON: a multi-row VALUES of 1,000 rows binds 9,000 parameters, and PostgreSQL parses and
 * plans that text on every call (~6 ms of its CPU per 1,000 rows of 9 columns, a third of the
 * INSERT's time with the search trigger); named, its plan would hold ~3 MB per connection. The
 * JSON form is one short text per (table, columns), so it is named (prepared.ts) and planned
 * once per connection; json_populate_record reads each value with the column's input function
 * (types follow the table as it is when planned, and PostgreSQL plans again after a push). The
 * rows go in in their order (ORDER BY the array's ordinality), as the VALUES tuples did.
 */
export function pgMultiRowInsert(sql: string): { perChunk: number; statement(n: number): string; columns: string[]; fromJson: string } | undefined {
  const insert = multiRowInsert(sql);
  if (!insert) return undefined;
  const { table, quoted, columns, perRow } = insert;
  const perChunk = Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_PARAMS / perRow)));
  const fromJson =
    `INSERT INTO ${table} (${quoted.join(', ')}) SELECT ${quoted.map((c) => `r.${c}`).join(', ')} ` +
    `FROM json_array_elements(?::json) WITH ORDINALITY AS e(v, n) CROSS JOIN LATERAL json_populate_record(NULL::${table}, e.v) AS r ORDER BY e.n`;
  return { perChunk, statement: insert.statement, columns, fromJson };
}

/**
 * A chunk's rows as the JSON array of objects `fromJson` reads, or undefined when a value
 * would not survive JSON exactly (a number that is not finite, a bigint): then the chunk goes
 * as VALUES.
 */
export function asJsonRows(columns: readonly string[], chunk: readonly Param[][]): string | undefined {
  const out = new Array<Record<string, Param>>(chunk.length);
  for (let r = 0; r < chunk.length; r++) {
    const row = chunk[r]!;
    const o: Record<string, Param> = {};
    for (let i = 0; i < columns.length; i++) {
      const v = row[i] ?? null;
      if (typeof v === 'bigint' || (typeof v === 'number' && !Number.isFinite(v))) return undefined;
      o[columns[i]!] = v;
    }
    out[r] = o;
  }
  return JSON.stringify(out);
}

/** The rows in arrays of at most `size`, each row copied (a producer may reuse its array). */
export function* chunks(rows: Iterable<readonly Param[]>, size: number): Generator<Param[][]> {
  let chunk: Param[][] = [];
  for (const r of rows) {
    chunk.push([...r]);
    if (chunk.length === size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}
