import type { Colors } from '../context.js';

/** Columns padded to their widest cell, a bold header; the one table of the CLI's listings. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[], c: Colors): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((cell, i) => (cell ?? '').padEnd(widths[i]!)).join('  ').trimEnd();
  return [c.bold(line(header)), ...rows.map(line)];
}

/** A value as one table cell: text as is, everything else as JSON, cut to `max` characters. */
export function cell(value: unknown, max = 40): string {
  const s = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  const flat = s.replace(/[\r\n\t]+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
