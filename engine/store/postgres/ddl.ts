import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import type { Executor, Param, SchemaDdl } from '../port.js';
import { changeColumnsOneByOne } from '../sql/column-changes.js';
import { convertColumnValue } from '../sql/convert.js';
import { indexIdent, indexKind, systemColumnsSql, tableIdent } from '../sql/idents.js';
import { CODECS, columnType } from './codecs.js';

/**
 * DDL for record tables in PostgreSQL (engine/store/port.ts SchemaDdl), inside the caller's
 * transaction: PostgreSQL DDL is transactional, so a push that fails partway leaves the
 * old tables, columns and indexes (contract.md §3 "all of it applies or none of it does").
 *
 * Each table has the system columns and one column per attribute (codecs.ts says which
 * type), plus `"_ss_seq"`, an identity column giving insertion order (what SQLite's rowid
 * gives; the dialect's insertionOrder): it is not an attribute (names may not start with
 * `_`) and never leaves the store. ALTER TABLE takes an ACCESS EXCLUSIVE lock on the table
 * until commit, so a concurrent write to it waits for the schema change rather than seeing
 * half of it.
 */

const TEXT = 'text COLLATE "C"';

/** PostgreSQL's SQL for each system column (which columns, in which order: SYSTEM_COLUMNS). */
const SYSTEM_COLUMN_SQL: Readonly<Record<string, string>> = {
  id: `${TEXT} PRIMARY KEY`,
  version: 'bigint NOT NULL',
  created_at: `${TEXT} NOT NULL`,
  updated_at: `${TEXT} NOT NULL`,
  created_by: TEXT,
};

export const postgresDdl: SchemaDdl = {
  async createRecordTable(tx, object, attributes) {
    const cols = attributes.map((a) => `, ${sqlIdent(a.name)} ${columnType(a)}`).join('');
    await tx.exec(
      `CREATE TABLE ${tableIdent(object)} ("_ss_seq" bigint GENERATED ALWAYS AS IDENTITY, ${systemColumnsSql(SYSTEM_COLUMN_SQL)}${cols})`,
    );
  },

  async dropRecordTable(tx, object) {
    await tx.exec(`DROP TABLE IF EXISTS ${tableIdent(object)}`);
  },

  async renameRecordTable(tx, from, to) {
    // PostgreSQL names a new table's implicit objects (primary key index, identity sequence)
    // avoiding existing names, so a later object under the old name does not collide.
    await tx.exec(`ALTER TABLE ${tableIdent(from)} RENAME TO ${tableIdent(to)}`);
  },

  async addColumn(tx, object, spec) {
    await tx.exec(`ALTER TABLE ${tableIdent(object)} ADD COLUMN ${sqlIdent(spec.name)} ${columnType(spec)}`);
  },

  async dropColumn(tx, object, attributeId, name) {
    await tx.exec(`DROP INDEX IF EXISTS ${indexIdent(attributeId)}`);
    await tx.exec(`ALTER TABLE ${tableIdent(object)} DROP COLUMN ${sqlIdent(name)}`);
  },

  /** Indexes refer to columns by position, not name: they follow the rename. */
  async renameColumn(tx, object, from, to) {
    await tx.exec(`ALTER TABLE ${tableIdent(object)} RENAME COLUMN ${sqlIdent(from)} TO ${sqlIdent(to)}`);
  },

  async syncIndex(tx, object, attributeId, spec, fresh) {
    const ix = indexIdent(attributeId);
    if (!fresh) await tx.exec(`DROP INDEX IF EXISTS ${ix}`);
    const on = `${tableIdent(object)} (${sqlIdent(spec.name)})`;
    const kind = indexKind(spec);
    if (kind !== 'none') await tx.exec(`CREATE ${kind === 'unique' ? 'UNIQUE ' : ''}INDEX ${ix} ON ${on}`);
  },

  changeColumnType,

  // Each ALTER costs PostgreSQL no scan of a whole schema: the changes go one by one.
  changeColumns: (tx, object, changes) => changeColumnsOneByOne(postgresDdl, tx, object, changes),
};

/** Rows converted per UPDATE (one bound jsonb list each). */
const CONVERT_CHUNK = 5000;

/**
 * A type change: every stored value goes through convertColumnValue (the registry's rules,
 * the same function of the value the SQLite backend applies), so both backends end with the
 * same values, and a value that cannot convert becomes NULL (the callers refused or approved
 * that loss before). The converted values go into a new column, which then replaces the old
 * one under the attribute's name; a rowid-like `_ss_seq`, the primary key and every other
 * column and index are untouched. `ALTER … TYPE … USING` would need each conversion written
 * again in SQL, a second definition of every rule.
 */
async function changeColumnType(tx: Executor, object: string, attributeId: string, from: AttributeSpec, to: AttributeSpec): Promise<void> {
  const table = tableIdent(object);
  const col = sqlIdent(from.name);
  const tmp = '"_ss_convert"';
  const type = columnType(to);
  // CAST names a type without its collation; the new column carries the collation.
  const castTo = type.replace(/ COLLATE "C"$/, '');
  await tx.exec(`DROP INDEX IF EXISTS ${indexIdent(attributeId)}`);
  const rows = await tx.all<{ id: string; v: unknown }>(`SELECT id, ${col} AS v FROM ${table} WHERE ${col} IS NOT NULL ORDER BY "_ss_seq"`);
  await tx.exec(`ALTER TABLE ${table} ADD COLUMN ${tmp} ${type}`);
  const converted: [string, string | null][] = [];
  for (const r of rows) {
    const v = convertColumnValue(CODECS, r.v, from, to);
    if (v !== undefined && v !== null) converted.push([r.id, textOf(v)]);
  }
  for (let i = 0; i < converted.length; i += CONVERT_CHUNK) {
    const chunk = JSON.stringify(converted.slice(i, i + CONVERT_CHUNK).map(([id, val]) => ({ id, val })));
    await tx.run(
      `UPDATE ${table} AS t SET ${tmp} = CAST(v.val AS ${castTo}) FROM jsonb_to_recordset(?::jsonb) AS v(id text, val text) WHERE t.id = v.id`,
      [chunk],
    );
  }
  await tx.exec(`ALTER TABLE ${table} DROP COLUMN ${col}`);
  await tx.exec(`ALTER TABLE ${table} RENAME COLUMN ${tmp} TO ${sqlIdent(to.name)}`);
}

/** A bound column value as the text its column type reads back (boolean input accepts 1/0). */
function textOf(v: Param): string {
  return typeof v === 'string' ? v : String(v);
}
