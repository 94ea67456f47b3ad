import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import { convertColumnValue } from '../sql/convert.js';
import { indexIdent, indexKind, systemColumnsSql, tableIdent } from '../sql/idents.js';
import { CODECS } from './codecs.js';
import type { Db } from './database.js';
import { intColumn } from '../sql/rows.js';

/**
 * DDL for record tables (issue 3: "a real table per object with a column per attribute
 * (STRICT), identifiers only from validated names, indexes for unique attributes and for
 * relations"). Callers run these inside their transaction; SQLite DDL is transactional.
 * backend.ts offers them as the port's SchemaDdl; they run on the one connection, which is
 * the transaction's (engine/store/sqlite/driver.ts).
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

/**
 * Up to this many rows a new column is added by rebuilding the table (rebuildTable) rather
 * than by ALTER TABLE … ADD COLUMN: the ALTER re-parses every table and trigger of the
 * schema (~50–120 ms with 1,000 record tables and their search triggers), the rebuild copies
 * the rows twice (~10 ms for 1,000 rows). Past it the copy costs more than the re-parse.
 */
const ADD_BY_REBUILD_MAX_ROWS = 20_000;

export function addColumn(db: Db, object: string, spec: AttributeSpec): void {
  const table = tableIdent(object);
  const column = `${sqlIdent(spec.name)} ${CODECS[spec.type].column}`;
  if (intColumn(db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get(), 'n') > ADD_BY_REBUILD_MAX_ROWS) {
    db.exec(`ALTER TABLE ${table} ADD COLUMN ${column}`);
    return;
  }
  rebuildTable(db, object, (columns) => ({
    defs: [...columns.map((c) => columnDef(c, c.type, c.name)), column],
    targets: [...columns.map((c) => sqlIdent(c.name)), sqlIdent(spec.name)],
    sources: [...columns.map((c) => sqlIdent(c.name)), 'NULL'],
  }));
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
  const kind = indexKind(spec);
  if (kind !== 'none') db.exec(`CREATE ${kind === 'unique' ? 'UNIQUE ' : ''}INDEX ${ix} ON ${tableIdent(object)} (${sqlIdent(spec.name)})`);
}

/**
 * A type change in a STRICT table (issue 3: "copy converted values via the registry's
 * convertFrom"). Values that cannot convert become NULL; the callers refuse or mark such
 * changes destructive before they get here.
 *
 * The table is rebuilt rather than the column altered (ADD, DROP COLUMN, RENAME COLUMN): each
 * ALTER makes SQLite re-check the whole schema, ~50 ms per ALTER with 1,000 record tables.
 * The rows go to a TEMP copy, the table is dropped and created again under its own name, and
 * the rows come back: no ALTER TABLE … RENAME, which re-parses every table of the schema
 * (~36 ms on 1,000 tables, against ~5 ms for the whole rebuild this way; issue 4: "the
 * one-attribute change applied in < 100 ms"). The rows are copied twice, which a table of
 * any size pays less for than the DROP COLUMN rewrite would cost. The rowid is kept (facts.ts
 * orders samples by it); the table's other indexes are re-created from their stored SQL;
 * column names stay, so document slots and relations keyed by name are untouched. Runs
 * inside the caller's transaction (the temp copy included): a failure leaves the old table.
 * SQL here and in facts.ts says `_rowid_`, never `rowid` or `oid`: those two are valid
 * attribute names, and a column of that name hides SQLite's own (values were scrambled).
 */
export function rebuildColumn(db: Db, object: string, attributeId: string, from: AttributeSpec, to: AttributeSpec): void {
  db.exec(`DROP INDEX IF EXISTS ${indexIdent(attributeId)}`);
  // The values are converted as they are copied, by the one conversion rule called from SQL:
  // no second pass of one UPDATE per row over the copy.
  db.function(CONVERT_FN, { deterministic: true }, (v: unknown) => (v === null ? null : (convertColumnValue(CODECS, v, from, to) ?? null)));
  rebuildTable(db, object, (columns) => {
    if (!columns.some((c) => c.name === from.name)) throw new Error(`column ${from.name} of ${tableIdent(object)} is not stored`);
    const renamed = (c: TableColumn) => (c.name === from.name ? to.name : c.name);
    return {
      defs: columns.map((c) => columnDef(c, c.name === from.name ? CODECS[to.type].column : c.type, renamed(c))),
      targets: columns.map((c) => sqlIdent(renamed(c))),
      sources: columns.map((c) => (c.name === from.name ? `${CONVERT_FN}(${sqlIdent(c.name)})` : sqlIdent(c.name))),
    };
  });
}

/** The SQL function a type change's copy converts with (defined for that copy, by rebuildColumn). */
const CONVERT_FN = '_ss_convert_column';

/** The new table's columns from the stored ones: definitions, the names written, what is read for each. */
interface TableShape {
  defs: string[];
  targets: string[];
  sources: string[];
}

/**
 * Rebuild a record table in place (see rebuildColumn for why no ALTER): rows to a TEMP copy
 * shaped by `shape` (a source may convert), the table is dropped and created again under
 * its own name, the rows come back with their rowids, the other indexes are re-created from
 * their stored SQL. Dropping the table drops its search triggers: every caller runs between
 * the full-text port's beforeSchemaChange and afterAttributeChange, which re-create them.
 */
function rebuildTable(db: Db, object: string, shape: (columns: TableColumn[]) => TableShape): void {
  const table = tableIdent(object);
  const tableName = table.slice(1, -1);
  const tmp = 'temp."_ss_rebuild_tmp"';
  const columns = db.prepare('SELECT name, type, "notnull" AS nn, dflt_value AS dflt, pk FROM pragma_table_info(?) ORDER BY cid').all(tableName) as TableColumn[];
  const { defs, targets, sources } = shape(columns);
  // Only indexes made by CREATE INDEX (unique, relation: syncIndex) have SQL to run again. Asked
  // of the parsed schema first: reading sqlite_schema scans all of it, the search triggers' SQL
  // included (~1.4 MB with 1,000 objects), as costly as a DDL statement.
  const made = db.prepare("SELECT 1 FROM pragma_index_list(?) WHERE origin = 'c'").all(tableName).length > 0;
  const indexes = made
    ? (db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").all(tableName) as { sql: string }[]).map((r) => r.sql)
    : [];
  db.exec(`DROP TABLE IF EXISTS ${tmp}`);
  db.exec(`CREATE TABLE ${tmp} (${defs.join(', ')}) STRICT`);
  db.exec(`INSERT INTO ${tmp} (_rowid_, ${targets.join(', ')}) SELECT _rowid_, ${sources.join(', ')} FROM ${table}`);
  db.exec(`DROP TABLE ${table}`);
  db.exec(`CREATE TABLE ${table} (${defs.join(', ')}) STRICT`);
  db.exec(`INSERT INTO ${table} (_rowid_, ${targets.join(', ')}) SELECT _rowid_, ${targets.join(', ')} FROM ${tmp}`);
  db.exec(`DROP TABLE ${tmp}`);
  // The stored SQL names the table by its (unchanged) name and columns by theirs.
  for (const sql of indexes) db.exec(sql);
}

/** One column's definition as stored, checked: record tables use only the codecs' types and carry no defaults. */
function columnDef(c: TableColumn, type: string, name: string): string {
  if (!COLUMN_TYPES.has(type)) throw new Error(`unexpected column type ${type} in a record table`);
  // Record tables carry no column defaults (createRecordTable, addColumn): one would be lost here.
  if (c.dflt !== null) throw new Error(`unexpected default on column ${c.name}`);
  return `${sqlIdent(name)} ${type}${c.pk ? ' PRIMARY KEY' : ''}${c.nn ? ' NOT NULL' : ''}`;
}

interface TableColumn {
  name: string;
  type: string;
  nn: number;
  dflt: string | null;
  pk: number;
}

const COLUMN_TYPES = new Set(['TEXT', 'INTEGER', 'REAL', 'BLOB', 'ANY']);
