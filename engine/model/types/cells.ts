import type { AttributeSpec, AttributeType } from '../attribute.js';
import { fail, ok, truncate } from './checks.js';
import type { Parsed } from './type-def.js';

/**
 * Attribute values as text cells: a CSV cell on import and export, and the `value` of the
 * CLI's `--set attr=value` (contract.md §4 "CSV cells are converted by the attribute's
 * type"). `fromCell` only turns text into the JSON value the API takes; the type's own
 * parse() (registry.ts) still judges that value, so the rules of a type stay in one place.
 * `toCell` is its inverse: for every value v a type accepts, fromCell(toCell(v)) is v, which
 * is what makes `records export` → `records import` round-trip (issue 17).
 *
 * A cell of `null` means "no value" (an unquoted empty CSV cell); the empty string is a
 * value of its own for text-like types (a quoted `""` in CSV).
 *
 * `Record<AttributeType, …>` so a new type fails to compile until it says how it is written.
 */
export interface CellCodec {
  fromCell(cell: string, spec: AttributeSpec): Parsed;
  toCell(value: unknown, spec: AttributeSpec): string;
}

/** A JavaScript number literal as JSON writes it: no hex, no `Infinity`, no surrounding blanks. */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const TRUE = new Set(['true', 'yes', '1']);
const FALSE = new Set(['false', 'no', '0']);

const asIs: CellCodec = { fromCell: (cell) => ok(cell), toCell: (value) => String(value) };

const numeric: CellCodec = {
  fromCell: (cell) => (NUMBER.test(cell) ? ok(Number(cell)) : fail(`must be a number (got ${JSON.stringify(truncate(cell))})`)),
  // String(n) is the shortest text that reads back as the same double.
  toCell: (value) => String(value),
};

/** JSON text: the json type's cell, and a list written as a JSON array. */
function parseJson(cell: string, what: string): Parsed {
  try {
    return ok(JSON.parse(cell));
  } catch {
    return fail(`must be ${what} (got ${JSON.stringify(truncate(cell))})`);
  }
}

/**
 * A list cell (multiselect, relation or document with multiple): a JSON array, which is what
 * export writes, or for hand-written files the items separated by `;` (`a; b`). A single
 * id/document is the cell as written.
 */
const list = (multipleOnly: boolean): CellCodec => ({
  fromCell: (cell, spec) => {
    if (multipleOnly && !spec.multiple) return ok(cell);
    if (cell.trimStart().startsWith('[')) return parseJson(cell, 'a JSON list');
    return ok(cell.trim() === '' ? [] : cell.split(';').map((s) => s.trim()));
  },
  toCell: (value, spec) => (multipleOnly && !spec.multiple ? String(value) : JSON.stringify(value)),
});

export const CELLS: Readonly<Record<AttributeType, CellCodec>> = {
  text: asIs,
  email: asIs,
  url: asIs,
  select: asIs,
  date: asIs,
  datetime: asIs,
  number: numeric,
  integer: numeric,
  boolean: {
    fromCell: (cell) => {
      const word = cell.trim().toLowerCase();
      if (TRUE.has(word)) return ok(true);
      if (FALSE.has(word)) return ok(false);
      return fail(`must be true or false (got ${JSON.stringify(truncate(cell))})`);
    },
    toCell: (value) => String(value),
  },
  json: { fromCell: (cell) => parseJson(cell, 'JSON text'), toCell: (value) => JSON.stringify(value) },
  multiselect: list(false),
  relation: list(true),
  document: list(true),
};

/** One cell → the API value; `null` stays null (no value). */
export function valueFromCell(spec: AttributeSpec, cell: string | null): Parsed {
  return cell === null ? ok(null) : CELLS[spec.type].fromCell(cell, spec);
}

/** One API value → its cell; null (no value) → null, which CSV writes as an empty, unquoted cell. */
export function cellFromValue(spec: AttributeSpec, value: unknown): string | null {
  return value === null || value === undefined ? null : CELLS[spec.type].toCell(value, spec);
}
