// Executor.runBatch's INSERT … VALUES as one statement per chunk of rows, for every backend
// (sqlite/batch.ts, postgres/batch-insert.ts): what the shared bulk-create statement is, read once.

/** A plain `INSERT INTO t (cols) VALUES (?, ?, …)`, and the same INSERT of n rows. */
export interface MultiRowInsert {
  /** The table, quoted as the statement has it. */
  table: string;
  /** The columns, quoted as the statement has them, and unquoted. */
  quoted: string[];
  columns: string[];
  /** Parameters per row. */
  perRow: number;
  /** The statement with n value tuples. */
  statement(n: number): string;
}

/**
 * `sql` read as a one-row INSERT … VALUES whose tuple holds only parameters, one per column
 * (the shape records.ts writeCreates sends), or undefined for any other statement, which then
 * runs once per row.
 */
export function multiRowInsert(sql: string): MultiRowInsert | undefined {
  const m = /^\s*(INSERT\s+INTO\s+("(?:[^"]|"")+")\s*\(([^()]*)\)\s+VALUES)\s*(\([\s?,]*\))\s*$/is.exec(sql);
  if (!m) return undefined;
  const [, head, table, cols, tuple] = m as unknown as [string, string, string, string, string];
  const perRow = tuple.split('?').length - 1;
  if (perRow === 0) return undefined;
  const quoted = cols.split(',').map((c) => c.trim());
  const columns = quoted.map((c) => (/^"(?:[^"]|"")+"$/.test(c) ? c.slice(1, -1).replaceAll('""', '"') : c));
  if (columns.length !== perRow || !columns.every((c) => /^[a-z][a-z0-9_]*$/.test(c))) return undefined;
  return { table, quoted, columns, perRow, statement: (n) => `${head} ${Array.from({ length: n }, () => tuple).join(', ')}` };
}
