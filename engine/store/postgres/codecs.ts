import type { AttributeSpec, AttributeType } from '../../model/attribute.js';
import type { Param } from '../port.js';

/**
 * How one attribute type is stored in PostgreSQL (architecture.md "codecs per backend"),
 * the counterpart of engine/store/sqlite/codecs.ts: the same API values in, the same out.
 *
 * - Text-like values, dates and datetimes: `text COLLATE "C"`. Dates and datetimes are kept
 *   as the normalised ISO text the API returns (which sorts as the values do), not as
 *   PostgreSQL's date/timestamptz, so a value reads back exactly as written. "C" is byte
 *   order, the order SQLite gives text, whatever the database's default collation: sorts and
 *   keyset cursors walk the same order on both backends, and lower() folds ASCII as
 *   SQLite's does.
 * - integer: bigint (SQLite INTEGER is 64-bit); number: double precision (SQLite REAL).
 * - boolean: boolean, bound as 1/0 (boolean input accepts them) and read back as 1/0 by
 *   the driver's type parser (driver.ts), so the shared SQL sees what SQLite gives.
 * - Lists and any JSON: their JSON text, as SQLite keeps it, cast to jsonb where a filter
 *   tests membership (dialect.ts). Not a jsonb column: jsonb keeps JSON's value but not its
 *   text (an object's keys come back reordered: `{"z":1,"a":2}` reads `{"a":2,"z":1}`), and
 *   sorting on such a column would follow jsonb's order instead of SQLite's text order.
 * - Relation and document ids: one id as text, several (`multiple`) as a JSON list.
 */
export interface Codec {
  /** The column's type in CREATE/ALTER TABLE. */
  column: string;
  /** A parsed (registry-checked) non-null value → the parameter bound for its column. */
  encode(value: unknown, spec: AttributeSpec): Param;
  /** A non-null column value as the driver returns it → the API value. */
  decode(column: unknown, spec: AttributeSpec): unknown;
  /** One element of a list column as a filter operand compares with it (dialect listContainsAny). */
  element?(value: unknown, spec: AttributeSpec): Param;
}

const TEXT = 'text COLLATE "C"';

const asIs: Codec = { column: TEXT, encode: (value) => value as string, decode: (value) => value };
const numeric = (column: string): Codec => ({ column, encode: (value) => value as number, decode: (value) => Number(value) });
const jsonValue: Codec = {
  column: TEXT,
  encode: (value) => JSON.stringify(value),
  decode: (value) => JSON.parse(String(value)),
  element: (value) => JSON.stringify(value),
};
const ids: Codec = {
  column: TEXT,
  encode: (value, spec) => (spec.multiple ? JSON.stringify(value) : String(value)),
  decode: (value, spec) => (spec.multiple ? JSON.parse(String(value)) : value),
  element: (value, spec) => (spec.multiple ? JSON.stringify(value) : String(value)),
};

export const CODECS: Record<AttributeType, Codec> = {
  text: asIs,
  email: asIs,
  url: asIs,
  select: asIs,
  date: asIs,
  datetime: asIs,
  integer: numeric('bigint'),
  number: numeric('double precision'),
  boolean: { column: 'boolean', encode: (value) => (value ? 1 : 0), decode: (value) => Number(value) !== 0 },
  multiselect: jsonValue,
  json: jsonValue,
  relation: ids,
  document: ids,
};

/** The column type of an attribute. */
export function columnType(spec: Pick<AttributeSpec, 'type'>): string {
  return CODECS[spec.type].column;
}
