/**
 * Decoders for rows better-sqlite3 returns as `unknown`: a count or a position is checked
 * to be an integer rather than cast (`as { n: number }`), so a changed query fails loudly.
 */
export function intColumn(row: unknown, column: string): number {
  const v = row !== null && typeof row === 'object' ? (row as Record<string, unknown>)[column] : undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  throw new Error(`expected an integer in column ${column}, got ${v === undefined ? 'no row' : typeof v}`);
}
