import { sqlIdent } from '../../model/names.js';

/**
 * Names of the database objects behind each schema object, shared by the core and every
 * backend's DDL (engine/store/port.ts SchemaDdl): quoted, built only from validated names.
 */

/** `"r_<object>"`: the object's record table; the name part passed the name rule. */
export function tableIdent(object: string): string {
  return `"r_${sqlIdent(object).slice(1)}`;
}

/** Index names from the attribute id, so renames of object or attribute never clash. */
export function indexIdent(attributeId: string): string {
  const safe = attributeId.replace(/[^a-zA-Z0-9]/g, '');
  return `"ix_${safe}"`;
}

/** System attributes that are real columns (`object` is the table itself). */
export const SYSTEM_COLUMNS = ['id', 'version', 'created_at', 'updated_at', 'created_by'] as const;
