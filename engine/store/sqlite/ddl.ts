import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import { indexIdent, indexKind, systemColumnsSql, tableIdent } from '../sql/idents.js';
import { CODECS } from './codecs.js';
import type { Db } from './database.js';

/**
 * DDL for record tables (issue 3: "a real table per object with a column per attribute
 * (STRICT), identifiers only from validated names, indexes for unique attributes and for
 * relations"). Callers run these inside their transaction; SQLite DDL is transactional.
 * backend.ts offers them as the port's SchemaDdl; they run on the one connection, which is
 * the transaction's (engine/store/sqlite/driver.ts). Column changes: columns.ts.
 */

/** SQLite's SQL for each system column (which columns, in which order: SYSTEM_COLUMNS). */
const SYSTEM_COLUMN_SQL: Readonly<Record<string, string>> = {
  id: 'TEXT PRIMARY KEY',
  version: 'INTEGER NOT NULL',
  created_at: 'TEXT NOT NULL',
  updated_at: 'TEXT NOT NULL',
  created_by: 'TEXT',
};

export function createRecordTable(db: Db, object: string, attributes: readonly AttributeSpec[]): void {
  const cols = attributes.map((a) => `${sqlIdent(a.name)} ${CODECS[a.type].column}`);
  db.exec(`CREATE TABLE ${tableIdent(object)} (${systemColumnsSql(SYSTEM_COLUMN_SQL)}${cols.map((c) => `, ${c}`).join('')}) STRICT`);
}

export function dropRecordTable(db: Db, object: string): void {
  db.exec(`DROP TABLE IF EXISTS ${tableIdent(object)}`);
}

export function renameRecordTable(db: Db, from: string, to: string): void {
  db.exec(`ALTER TABLE ${tableIdent(from)} RENAME TO ${tableIdent(to)}`);
}

/** The index an attribute should have: unique → UNIQUE, relation → plain, else none. */
export function syncIndex(db: Db, object: string, attributeId: string, spec: AttributeSpec, fresh = false): void {
  const ix = indexIdent(attributeId);
  // DDL re-reads the whole schema; a new attribute has no index to drop.
  if (!fresh) db.exec(`DROP INDEX IF EXISTS ${ix}`);
  const kind = indexKind(spec);
  if (kind !== 'none') db.exec(`CREATE ${kind === 'unique' ? 'UNIQUE ' : ''}INDEX ${ix} ON ${tableIdent(object)} (${sqlIdent(spec.name)})`);
}
