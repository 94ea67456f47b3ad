import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import { isMultiValued } from '../../model/types/registry.js';
import type { Dialect } from '../port.js';
import { sqlLiteral, tableIdent } from './idents.js';
import { JOIN, SEPARATOR } from './search-text.js';

// The SQL of a record's row in the search index, written the same for both backends (their
// dialect joins a multiselect's options): the layout is sql/search-layout.ts's.

/** The indexed text of attribute `a` of `row`: a list's options joined (multiselect), any other text as is. */
export function attributeText(dialect: Dialect, a: AttributeSpec, row: string): string {
  const col = `${row}.${sqlIdent(a.name)}`;
  return isMultiValued(a) ? dialect.listJoined(col) : col;
}

/**
 * A record's row text: each attribute of the layout `attrs` (an empty one is ''), the
 * separator taken out of each value and put between them, so splitting the text at JOIN
 * gives each attribute's text back exactly.
 */
export function recordText(dialect: Dialect, attrs: readonly AttributeSpec[], row: string): string {
  return attrs.map((a) => `coalesce(replace(${attributeText(dialect, a, row)}, ${sqlLiteral(SEPARATOR)}, ' '), '')`).join(` || ${sqlLiteral(JOIN)} || `);
}

/** The row text of a record with no text at all (only separators): no row is written for it. */
export const emptyRecordText = (attrs: readonly AttributeSpec[]): string => sqlLiteral(attrs.slice(1).map(() => JOIN).join(''));

/** A query answering a row when any record of `o` has text in attribute `name` (a multiselect: any option); undefined when `o` has no such attribute. */
export function holdsTextSql(dialect: Dialect, o: StoredObject, name: string): string | undefined {
  const a = o.attributes.find((x) => x.name === name);
  if (!a) return undefined;
  const text = attributeText(dialect, a, 'r');
  return `SELECT 1 AS x FROM ${tableIdent(o.name)} AS r WHERE ${text} IS NOT NULL AND ${text} <> '' LIMIT 1`;
}
