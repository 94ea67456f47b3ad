import type { AttributeType } from '../../model/attribute.js';
import type { Codec } from '../port.js';

/** The STRICT-table column types record tables use. */
export type ColumnType = 'TEXT' | 'INTEGER' | 'REAL' | 'ANY';
/** What better-sqlite3 binds and returns for a record column. */
export type SqlValue = string | number | bigint | null;

/**
 * How one attribute type is stored in SQLite (architecture.md "codecs per backend"): the
 * registry (engine/model/types) says what a value is; the port's Codec how it is encoded,
 * plus here the STRICT column type the DDL gives it. `Record<AttributeType, SqliteCodec>`
 * below, so a new type without a codec fails to compile.
 */
export interface SqliteCodec extends Codec {
  column: ColumnType;
}

const asIs = (column: ColumnType): SqliteCodec => ({ column, encode: (value) => value as SqlValue, decode: (value) => value });
const numeric = (column: ColumnType): SqliteCodec => ({ column, encode: (value) => value as number, decode: (value) => Number(value) });
/** JSON text: lists (multiselect) and any JSON (json). */
const jsonText: SqliteCodec = {
  column: 'TEXT',
  encode: (value) => JSON.stringify(value),
  decode: (value) => JSON.parse(String(value)),
  // json_each yields JSON true/false as 1/0.
  element: (value) => (typeof value === 'boolean' ? (value ? 1 : 0) : (value as SqlValue)),
};
/** Relation and document ids: one id as text, several (`multiple`) as a JSON list. */
const ids: SqliteCodec = {
  column: 'TEXT',
  encode: (value, spec) => (spec.multiple ? JSON.stringify(value) : String(value)),
  decode: (value, spec) => (spec.multiple ? JSON.parse(String(value)) : value),
};

export const CODECS: Record<AttributeType, SqliteCodec> = {
  text: asIs('TEXT'),
  email: asIs('TEXT'),
  url: asIs('TEXT'),
  select: asIs('TEXT'),
  // Dates and datetimes as their normalised ISO text, which sorts as the values do.
  date: asIs('TEXT'),
  datetime: asIs('TEXT'),
  integer: numeric('INTEGER'),
  number: numeric('REAL'),
  // STRICT tables have no boolean: 0/1, read back as a boolean.
  boolean: { column: 'INTEGER', encode: (value) => (value ? 1 : 0), decode: (value) => Number(value) !== 0 },
  multiselect: jsonText,
  json: jsonText,
  relation: ids,
  document: ids,
};

