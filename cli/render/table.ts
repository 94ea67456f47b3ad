import type { Colors } from '../context.js';

/** Columns padded to their widest cell, a bold header; the one table of the CLI's listings. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[], c: Colors): string[] {
  const widths = columnWidths(header, rows);
  return [c.bold(padRow(header, widths)), ...rows.map((r) => padRow(r, widths))];
}

/** Each column's width: its widest cell or its header. */
export function columnWidths(header: readonly string[], rows: readonly (readonly string[])[]): number[] {
  return header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
}

/** One table line: cells padded to the widths, two spaces apart. */
export function padRow(cells: readonly string[], widths: readonly number[]): string {
  return cells.map((cell, i) => (cell ?? '').padEnd(widths[i] ?? 0)).join('  ').trimEnd();
}

/** Control characters as spaces, one for one (so offsets into the text still hold). */
export function flatten(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

/**
 * Text as one table cell: control characters (newlines, tabs, terminal escapes in stored
 * text) become spaces, so a value can neither break the table nor drive the terminal; cut
 * to `max` characters.
 */
export function fitCell(text: string, max: number): string {
  const flat = flatten(text);
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A value as one table cell: text as is, everything else as JSON, cut to `max` characters. */
export function cell(value: unknown, max = 40): string {
  return fitCell(value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value), max);
}
