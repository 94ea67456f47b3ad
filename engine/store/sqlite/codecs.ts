import type { AttributeSpec, AttributeType } from '../../model/attribute.js';

/** The STRICT-table column types record tables use. */
export type ColumnType = 'TEXT' | 'INTEGER' | 'REAL' | 'ANY';
/** What better-sqlite3 binds and returns for a record column. */
export type SqlValue = string | number | bigint | null;

/**
 * How one attribute type is stored in SQLite (architecture.md "codecs per backend"): the
 * registry (engine/model/types) says what a value is; this says how it sits in a column.
 * `Record<AttributeType, Codec>` below, so a new type without a codec fails to compile.
 */
export interface Codec {
  column: ColumnType;
  /** A parsed (registry-checked) non-null value → its column value. */
  encode(value: unknown, spec: AttributeSpec): SqlValue;
  /** A non-null column value → the API value. */
  decode(column: SqlValue, spec: AttributeSpec): unknown;
  /**
   * One element of a list column as json_each yields it (filters on list types compare
   * one element, engine/model/filter-operand.ts). Absent: the element is bound as it is.
   */
  element?(value: unknown): SqlValue;
}

const asIs = (column: ColumnType): Codec => ({ column, encode: (value) => value as SqlValue, decode: (value) => value });
const numeric = (column: ColumnType): Codec => ({ column, encode: (value) => value as number, decode: (value) => Number(value) });
/** JSON text: lists (multiselect) and any JSON (json). */
const jsonText: Codec = {
  column: 'TEXT',
  encode: (value) => JSON.stringify(value),
  decode: (value) => JSON.parse(String(value)),
  // json_each yields JSON true/false as 1/0.
  element: (value) => (typeof value === 'boolean' ? (value ? 1 : 0) : (value as SqlValue)),
};
/** Relation and document ids: one id as text, several (`multiple`) as a JSON list. */
const ids: Codec = {
  column: 'TEXT',
  encode: (value, spec) => (spec.multiple ? JSON.stringify(value) : String(value)),
  decode: (value, spec) => (spec.multiple ? JSON.parse(String(value)) : value),
};

export const CODECS: Record<AttributeType, Codec> = {
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

export function codecOf(type: AttributeType): Codec {
  return CODECS[type];
}

/** Column value → API value; null stays null. */
export function decodeColumn(column: SqlValue | undefined, spec: AttributeSpec): unknown {
  return column === null || column === undefined ? null : CODECS[spec.type].decode(column, spec);
}

/** A checked filter operand (engine/model/filter-operand.ts) as the column, or json_each, holds it. */
export function encodeOperand(value: unknown, element: boolean, spec: AttributeSpec): SqlValue {
  if (value === null) return null;
  const codec = CODECS[spec.type];
  if (element) return codec.element ? codec.element(value) : (value as SqlValue);
  return codec.encode(value, spec);
}
