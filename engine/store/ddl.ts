import type { AttributeSpec } from '../model/attribute.js';
import { sqlIdent } from '../model/names.js';
import { typeDef } from '../model/types/registry.js';
import type { SqlValue } from '../model/types/type-def.js';
import { convertColumnValue } from './convert.js';
import { indexIdent, tableIdent } from './catalog.js';
import type { Db } from './db.js';

/**
 * DDL for record tables (issue 3: "a real table per object with a column per attribute
 * (STRICT), identifiers only from validated names, indexes for unique attributes and for
 * relations"). Callers run these inside their transaction; SQLite DDL is transactional.
 */

export function createRecordTable(db: Db, object: string, attributes: readonly AttributeSpec[]): void {
  const cols = attributes.map((a) => `${sqlIdent(a.name)} ${typeDef(a.type).column}`);
  db.exec(
    `CREATE TABLE ${tableIdent(object)} (id TEXT PRIMARY KEY, version INTEGER NOT NULL, created_at TEXT NOT NULL, ` +
      `updated_at TEXT NOT NULL, created_by TEXT${cols.map((c) => `, ${c}`).join('')}) STRICT`,
  );
}

export function dropRecordTable(db: Db, object: string): void {
  db.exec(`DROP TABLE IF EXISTS ${tableIdent(object)}`);
}

export function renameRecordTable(db: Db, from: string, to: string): void {
  db.exec(`ALTER TABLE ${tableIdent(from)} RENAME TO ${tableIdent(to)}`);
}

export function addColumn(db: Db, object: string, spec: AttributeSpec): void {
  db.exec(`ALTER TABLE ${tableIdent(object)} ADD COLUMN ${sqlIdent(spec.name)} ${typeDef(spec.type).column}`);
}

export function dropColumn(db: Db, object: string, attributeId: string, name: string): void {
  db.exec(`DROP INDEX IF EXISTS ${indexIdent(attributeId)}`);
  db.exec(`ALTER TABLE ${tableIdent(object)} DROP COLUMN ${sqlIdent(name)}`);
}

/** SQLite rewrites indexes that name the column, so relation/unique indexes follow renames. */
export function renameColumn(db: Db, object: string, from: string, to: string): void {
  db.exec(`ALTER TABLE ${tableIdent(object)} RENAME COLUMN ${sqlIdent(from)} TO ${sqlIdent(to)}`);
}

/** The index an attribute should have: unique → UNIQUE, relation → plain, else none. */
export function syncIndex(db: Db, object: string, attributeId: string, spec: AttributeSpec, fresh = false): void {
  const ix = indexIdent(attributeId);
  // DDL re-reads the whole schema; a new attribute has no index to drop.
  if (!fresh) db.exec(`DROP INDEX IF EXISTS ${ix}`);
  if (spec.unique) db.exec(`CREATE UNIQUE INDEX ${ix} ON ${tableIdent(object)} (${sqlIdent(spec.name)})`);
  else if (spec.type === 'relation') db.exec(`CREATE INDEX ${ix} ON ${tableIdent(object)} (${sqlIdent(spec.name)})`);
}

/**
 * A type change in a STRICT table (issue 3: "add new column, copy converted values via the
 * registry's convertFrom, drop old, rename"). Values that cannot convert become NULL; the
 * callers refuse or mark such changes destructive before they get here.
 */
export function rebuildColumn(db: Db, object: string, attributeId: string, from: AttributeSpec, to: AttributeSpec): void {
  const table = tableIdent(object);
  const col = sqlIdent(from.name);
  const tmp = '"_ss_convert_tmp"';
  db.exec(`DROP INDEX IF EXISTS ${indexIdent(attributeId)}`);
  db.exec(`ALTER TABLE ${table} ADD COLUMN ${tmp} ${typeDef(to.type).column}`);
  const rows = db.prepare(`SELECT id, ${col} AS v FROM ${table} WHERE ${col} IS NOT NULL`).all() as { id: string; v: SqlValue }[];
  const write = db.prepare(`UPDATE ${table} SET ${tmp} = ? WHERE id = ?`);
  for (const r of rows) write.run(convertColumnValue(r.v, from, to) ?? null, r.id);
  db.exec(`ALTER TABLE ${table} DROP COLUMN ${col}`);
  db.exec(`ALTER TABLE ${table} RENAME COLUMN ${tmp} TO ${sqlIdent(to.name === from.name ? from.name : to.name)}`);
}
