import type { RecordOut } from '../../engine/model/stored.js';
import type { Colors } from '../context.js';
import type { RecordShape } from '../records/shape.js';
import { columnWidths, fitCell, padRow } from './table.js';

/**
 * Records as a table for a terminal (`records list`): the whole id and every attribute, each
 * cell as its CSV text (engine/model/types/cells.ts) on one line, cut at 32 characters. Widths come
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
  // The id whole: it is what `records get|update|delete` take, copied from here.
  const cell = (r: RecordOut, name: string): string => (name === 'id' ? r.id : fitCell(shape.toCell(name, r.values[name]) ?? '-', MAX_CELL));
  const line = (cells: string[]) => padRow(cells, widths!);
  return {
    rows(records) {
      const cells = records.map((r) => columns.map((name) => cell(r, name)));
      if (!widths) {
        widths = columnWidths(columns, cells);
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
