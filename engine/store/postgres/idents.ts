import { createHash } from 'node:crypto';
import { sqlIdent } from '../../model/names.js';

/**
 * PostgreSQL truncates identifiers to 63 bytes (NAMEDATALEN - 1), so `"r_<name>"` for a
 * 62- and a 63-character object name sharing their first 61 characters would name one
 * table. Names that fit keep the SQLite form; longer ones are cut and tagged with a hash
 * of the whole name under another prefix (`t_`), so a cut name can never equal a kept one.
 */
const MAX_IDENT = 63;

export function pgTableName(object: string): string {
  const name = sqlIdent(object).slice(1, -1);
  if (name.length + 2 <= MAX_IDENT) return `r_${name}`;
  const tag = createHash('sha256').update(name).digest('hex').slice(0, 12);
  return `t_${name.slice(0, MAX_IDENT - 2 - 1 - tag.length)}_${tag}`;
}

/** The record table of `object`, quoted. */
export function pgTableIdent(object: string): string {
  return `"${pgTableName(object)}"`;
}

/** Index names from the attribute id, so renames of object or attribute never clash. */
export function pgIndexIdent(attributeId: string): string {
  return `"ix_${attributeId.replace(/[^a-zA-Z0-9]/g, '').slice(0, MAX_IDENT - 3)}"`;
}
