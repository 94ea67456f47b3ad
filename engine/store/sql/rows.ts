/**
 * Decoders for rows a driver returns as `unknown`: a count or a position is checked to be
 * an integer rather than cast (`as { n: number }`), so a changed query fails loudly.
 * Drivers differ in how they return a 64-bit integer (SQLite: number, or bigint; PostgreSQL's
 * COUNT: a decimal string), so each form is accepted here and nowhere else.
 */
export function intColumn(row: unknown, column: string): number {
  const v = row !== null && typeof row === 'object' ? (row as Record<string, unknown>)[column] : undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && /^-?[0-9]{1,15}$/.test(v)) return Number(v);
  throw new Error(`expected an integer in column ${column}, got ${v === undefined ? 'no row' : typeof v}`);
}
