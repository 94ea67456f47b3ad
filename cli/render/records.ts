import type { RecordOut } from '../../engine/model/stored.js';
import type { Colors } from '../context.js';
import type { RecordShape } from '../records/shape.js';

/**
 * Records as a table for a terminal (`records list`): id and every attribute, each cell as
 * its CSV text (engine/model/types/cells.ts) on one line, cut at 32 characters. Widths come
 * from the first page, so `--all` prints page by page without holding every record.
 */
const MAX_CELL = 32;

export interface RecordTable {
  rows(records: readonly RecordOut[]): void;
  end(count: number): void;
}

export function recordTable(out: NodeJS.WritableStream, shape: RecordShape, c: Colors): RecordTable {
  const columns = ['id', ...shape.attributes.map((a) => a.name)];
  let widths: number[] | undefined;
  const cell = (r: RecordOut, name: string): string => {
    const text = name === 'id' ? r.id : (shape.toCell(name, r.values[name]) ?? '-');
    const flat = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
    return flat.length > MAX_CELL ? `${flat.slice(0, MAX_CELL - 1)}…` : flat;
  };
  const line = (cells: string[]) => cells.map((s, i) => s.padEnd(widths![i]!)).join('  ').trimEnd();
  return {
    rows(records) {
      const cells = records.map((r) => columns.map((name) => cell(r, name)));
      if (!widths) {
        widths = columns.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
        out.write(`${c.bold(line(columns))}\n`);
      }
      if (cells.length > 0) out.write(`${cells.map(line).join('\n')}\n`);
    },
    end(count) {
      if (!widths) out.write(`${c.bold(columns.join('  '))}\n`);
      out.write(`${c.dim(`${count} record${count === 1 ? '' : 's'}`)}\n`);
    },
  };
}
