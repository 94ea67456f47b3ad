import { SYSTEM_COLUMNS, sqlIdent } from '../../model/names.js';
import type { AttributeSpec } from '../../model/attribute.js';
import { typeDef } from '../../model/types/registry.js';

/**
 * Names of the database objects behind each schema object, shared by the core and every
 * backend's DDL (engine/store/port.ts SchemaDdl): quoted, built only from validated names.
 */

/** `"r_<object>"`: the object's record table; the name part passed the name rule. */
export function tableIdent(object: string): string {
  return `"r_${sqlIdent(object).slice(1)}`;
}

/** A SQL string literal of a name (validated: engine/model/names.ts; the quoting is belt and braces) or a fixed text. */
export const sqlLiteral = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/** Index names from the attribute id, so renames of object or attribute never clash. */
export function indexIdent(attributeId: string): string {
  const safe = attributeId.replace(/[^a-zA-Z0-9]/g, '');
  return `"ix_${safe}"`;
}

/**
 * The index an attribute's column gets: unique → UNIQUE, a relation → plain (its ids are
 * looked up by the reverse-reference and delete rules), else none. Every backend's
 * syncIndex and the core's "did the need change" check read this one rule.
 */
export function indexKind(spec: AttributeSpec): 'unique' | 'plain' | 'none' {
  return spec.unique ? 'unique' : typeDef(spec.type).reference === 'record' ? 'plain' : 'none';
}

/**
 * The system columns of a record table, in the one table's order (engine/model/names.ts
 * SYSTEM_ATTRIBUTE_TABLE): each backend gives only its column SQL. A system column the
 * backend has no SQL for fails at the first CREATE TABLE rather than making a table without it.
 */
export function systemColumnsSql(sqlOf: Readonly<Record<string, string>>): string {
  return SYSTEM_COLUMNS.map((name) => {
    const sql = Object.hasOwn(sqlOf, name) ? sqlOf[name] : undefined;
    if (sql === undefined) throw new Error(`no column SQL for the system column ${name}`);
    return `${name} ${sql}`;
  }).join(', ');
}
