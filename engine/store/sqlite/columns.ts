import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import type { ColumnChange } from '../port.js';
import { convertColumnValue } from '../sql/convert.js';
import { indexIdent, tableIdent } from '../sql/idents.js';
import { intColumn } from '../sql/rows.js';
import { CODECS } from './codecs.js';
import type { Db } from './database.js';

/**
 * Column changes of record tables (engine/store/port.ts SchemaDdl: addColumn, dropColumn,
 * renameColumn, changeColumnType, changeColumns). Callers run these inside their
 * transaction; SQLite DDL is transactional, so a failure leaves the old table. backend.ts
 * offers them as the port's members.
 *
 * Each DDL statement scans the whole `sqlite_schema` (with 1,000 record tables and their
 * search triggers ~1.6 MB of SQL), and an ALTER TABLE re-parses every table and trigger of
 * the schema on top (~50–120 ms with 1,000 objects). So a table is changed by rebuilding
 * it (rebuildTable: a few statements, the rows copied twice, ~5 ms for 1,000 rows) unless
 * the table is big and the change is one SQLite makes without a rebuild; and the column
 * changes of one object in one push are made by one rebuild, not one per change.
 */

/**
 * Up to this many rows a new column is added by rebuilding the table rather than by ALTER
 * TABLE … ADD COLUMN: the ALTER re-parses the whole schema (see above), the rebuild copies
 * the rows twice (~10 ms for 1,000 rows). Past it the copy costs more than the re-parse.
 */
const ADD_BY_REBUILD_MAX_ROWS = 20_000;

const noop = (): void => undefined;

export function addColumn(db: Db, object: string, spec: AttributeSpec, beforeAlter = noop): void {
  changeColumns(db, object, [{ kind: 'add', spec }], beforeAlter);
}

export function dropColumn(db: Db, object: string, attributeId: string, name: string, beforeAlter = noop): void {
  changeColumns(db, object, [{ kind: 'drop', attributeId, name }], beforeAlter);
}

/** SQLite rewrites indexes that name the column, so relation/unique indexes follow renames. */
export function renameColumn(db: Db, object: string, from: string, to: string, beforeAlter = noop): void {
  changeColumns(db, object, [{ kind: 'rename', from, to }], beforeAlter);
}

/**
 * A type change in a STRICT table (issue 3: "copy converted values via the registry's
 * convertFrom"): the table is rebuilt with the column's new type, every value converted as
 * it is copied. Values that cannot convert become NULL; the callers refuse or mark such
 * changes destructive before they get here.
 */
export function changeColumnType(db: Db, object: string, attributeId: string, from: AttributeSpec, to: AttributeSpec, beforeAlter = noop): void {
  changeColumns(db, object, [{ kind: 'retype', attributeId, from, to }], beforeAlter);
}

/**
 * Several changes of one table at once (SchemaDdl.changeColumns; one change is the case of
 * each member above): one rebuild when any needs it (a type change) or the table is small
 * enough that a rebuild is cheaper than an ALTER; otherwise each change by its ALTER
 * (ADD COLUMN, RENAME COLUMN, DROP COLUMN), which SQLite makes without copying the table.
 * One lone rename or drop keeps its ALTER: a rebuild would copy every row for it.
 * `beforeAlter` runs before the first ALTER (the search triggers of a push go then,
 * fulltext-schema.ts TriggerBatch); a rebuild's DROP TABLE takes them itself.
 */
export function changeColumns(db: Db, object: string, changes: readonly ColumnChange[], beforeAlter = noop): void {
  const retypes = changes.some((c) => c.kind === 'retype');
  const maybeRebuild = retypes || changes.length > 1 || changes[0]?.kind === 'add';
  if (maybeRebuild && (retypes || rowCount(db, object) <= ADD_BY_REBUILD_MAX_ROWS)) {
    rebuildWith(db, object, changes);
    return;
  }
  beforeAlter();
  const table = tableIdent(object);
  for (const c of changes) {
    if (c.kind === 'add') db.exec(`ALTER TABLE ${table} ADD COLUMN ${sqlIdent(c.spec.name)} ${CODECS[c.spec.type].column}`);
    else if (c.kind === 'rename') db.exec(`ALTER TABLE ${table} RENAME COLUMN ${sqlIdent(c.from)} TO ${sqlIdent(c.to)}`);
    else if (c.kind === 'drop') {
      db.exec(`DROP INDEX IF EXISTS ${indexIdent(c.attributeId)}`);
      db.exec(`ALTER TABLE ${table} DROP COLUMN ${sqlIdent(c.name)}`);
    }
  }
}

function rowCount(db: Db, object: string): number {
  return intColumn(db.prepare(`SELECT COUNT(*) AS n FROM ${tableIdent(object)}`).get(), 'n');
}

/** The SQL function a rebuild's copy converts with: `(k, value)`, k the column's place in the rebuild's list of conversions. */
const CONVERT_FN = '_ss_convert_column';

/** One column of the rebuilt table: its definition, the stored column it is copied from (none: new), the conversions on the way. */
interface Slot {
  name: string;
  type: string;
  nn: number;
  pk: number;
  from: string | undefined;
  converts: [AttributeSpec, AttributeSpec][];
}

/**
 * The table after `changes`, by one rebuild. The changes are applied in order to the list of
 * the stored columns: an add appends an empty column, a rename renames, a type change sets
 * the column type and queues the conversion (a renamed column converts from its new name's
 * spec, as changeColumnType is called after the rename), a drop removes the column. The
 * indexes of retyped and dropped attributes go with the old table (their steps' syncIndex
 * makes the new ones, SchemaDdl.changeColumnType); every other index is made again on the
 * columns it named, under their new names.
 */
function rebuildWith(db: Db, object: string, changes: readonly ColumnChange[]): void {
  const table = tableIdent(object);
  const tableName = table.slice(1, -1);
  const stored = db.prepare('SELECT name, type, "notnull" AS nn, dflt_value AS dflt, pk FROM pragma_table_info(?) ORDER BY cid').all(tableName) as TableColumn[];
  const slots: Slot[] = stored.map((c) => {
    // Record tables carry no column defaults (createRecordTable, adds here): one would be lost.
    if (c.dflt !== null) throw new Error(`unexpected default on column ${c.name}`);
    return { name: c.name, type: c.type, nn: c.nn, pk: c.pk, from: c.name, converts: [] };
  });
  const gone = new Set<string>(); // indexes not made again
  const slot = (name: string): Slot => {
    const s = slots.find((x) => x.name === name);
    if (!s) throw new Error(`column ${name} of ${table} is not stored`);
    return s;
  };
  const free = (name: string): void => {
    if (slots.some((x) => x.name === name)) throw new Error(`column ${name} of ${table} exists already`);
  };
  for (const c of changes) {
    if (c.kind === 'add') {
      free(c.spec.name);
      slots.push({ name: c.spec.name, type: CODECS[c.spec.type].column, nn: 0, pk: 0, from: undefined, converts: [] });
    } else if (c.kind === 'rename') {
      const s = slot(c.from);
      if (c.to !== c.from) free(c.to);
      s.name = c.to;
    } else if (c.kind === 'retype') {
      const s = slot(c.from.name);
      if (c.to.name !== c.from.name) free(c.to.name);
      s.converts.push([c.from, c.to]);
      s.type = CODECS[c.to.type].column;
      s.name = c.to.name;
      gone.add(bareIndexName(c.attributeId));
    } else {
      slots.splice(slots.indexOf(slot(c.name)), 1);
      gone.add(bareIndexName(c.attributeId));
    }
  }
  const conversions = slots.filter((s) => s.converts.length > 0).map((s) => s.converts);
  if (conversions.length > 0) {
    // The values are converted as they are copied, by the one conversion rule called from
    // SQL (a chain when a column changed type twice): no second pass of one UPDATE per row.
    db.function(CONVERT_FN, { deterministic: true }, (k: unknown, v: unknown) => {
      let value = v;
      for (const [from, to] of conversions[Number(k)]!) value = value === null ? null : (convertColumnValue(CODECS, value, from, to) ?? null);
      return value;
    });
  }
  const copied = slots.filter((s): s is Slot & { from: string } => s.from !== undefined);
  rebuildTable(db, table, {
    defs: slots.map(columnDef),
    targets: copied.map((s) => sqlIdent(s.name)),
    sources: copied.map((s) => (s.converts.length > 0 ? `${CONVERT_FN}(${conversions.indexOf(s.converts)}, ${sqlIdent(s.from)})` : sqlIdent(s.from))),
    indexes: indexesAfter(db, tableName, table, gone, new Map(copied.map((s) => [s.from, s.name]))),
  });
}

/**
 * The CREATE INDEX statements that make the table's indexes again after a rebuild, on the
 * columns' new names (`renamed`: stored name → new name), except those in `gone`. Only
 * indexes made by CREATE INDEX are listed (syncIndex's `ix_<attribute id>`: one column, no
 * WHERE); anything else on a record table fails the change rather than being lost. Read from
 * the parsed schema (pragmas), not from `sqlite_schema`, whose scan costs as much as a DDL
 * statement. Index names are checked against indexIdent's shape before they are quoted.
 */
function indexesAfter(db: Db, tableName: string, table: string, gone: ReadonlySet<string>, renamed: ReadonlyMap<string, string>): string[] {
  const list = db.prepare("SELECT name, \"unique\" AS u, partial FROM pragma_index_list(?) WHERE origin = 'c'").all(tableName) as { name: string; u: number; partial: number }[];
  const out: string[] = [];
  for (const ix of list) {
    if (gone.has(ix.name)) continue;
    const columns = db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').all(ix.name) as { name: string | null }[];
    const names = columns.map((c) => (c.name === null ? undefined : renamed.get(c.name)));
    if (!INDEX_NAME.test(ix.name) || ix.partial || names.length === 0 || names.some((n) => n === undefined)) {
      throw new Error(`index ${ix.name} of ${table} cannot be carried over a rebuild`);
    }
    out.push(`CREATE ${ix.u ? 'UNIQUE ' : ''}INDEX "${ix.name}" ON ${table} (${names.map((n) => sqlIdent(n!)).join(', ')})`);
  }
  return out;
}

/** indexIdent's names, unquoted: `ix_` and letters and digits only. */
const INDEX_NAME = /^ix_[a-zA-Z0-9]+$/;

function bareIndexName(attributeId: string): string {
  return indexIdent(attributeId).slice(1, -1);
}

/** The new table: column definitions, the columns written and what is read for each, the indexes to make again. */
interface TableShape {
  defs: string[];
  targets: string[];
  sources: string[];
  indexes: string[];
}

/**
 * Rebuild a record table in place: rows to a TEMP copy shaped by `shape` (a source may
 * convert), the table is dropped and created again under its own name, the rows come back
 * with their rowids, the indexes are made again. No ALTER TABLE … RENAME, which re-parses
 * every table of the schema (~36 ms on 1,000 tables, against ~5 ms for the whole rebuild this
 * way). The rowid is kept: the search index keys its rows by `_rowid_` (fulltext.ts) and
 * facts.ts orders samples by it. Column names stay unless renamed, so document slots and
 * relations keyed by name are untouched. Dropping the table drops its search triggers: every
 * caller runs between the full-text port's beforeSchemaChange and afterAttributeChange, which
 * re-create them. SQL here and in facts.ts says `_rowid_`, never `rowid` or `oid`: those two
 * are valid attribute names, and a column of that name hides SQLite's own.
 */
function rebuildTable(db: Db, table: string, { defs, targets, sources, indexes }: TableShape): void {
  const tmp = 'temp."_ss_rebuild_tmp"';
  db.exec(`DROP TABLE IF EXISTS ${tmp}`);
  db.exec(`CREATE TABLE ${tmp} (${defs.join(', ')}) STRICT`);
  db.exec(`INSERT INTO ${tmp} (_rowid_, ${targets.join(', ')}) SELECT _rowid_, ${sources.join(', ')} FROM ${table}`);
  db.exec(`DROP TABLE ${table}`);
  db.exec(`CREATE TABLE ${table} (${defs.join(', ')}) STRICT`);
  db.exec(`INSERT INTO ${table} (_rowid_, ${targets.join(', ')}) SELECT _rowid_, ${targets.join(', ')} FROM ${tmp}`);
  db.exec(`DROP TABLE ${tmp}`);
  for (const sql of indexes) db.exec(sql);
}

/** One column's definition, checked: record tables use only the codecs' types. */
function columnDef(s: Slot): string {
  if (!COLUMN_TYPES.has(s.type)) throw new Error(`unexpected column type ${s.type} in a record table`);
  return `${sqlIdent(s.name)} ${s.type}${s.pk ? ' PRIMARY KEY' : ''}${s.nn ? ' NOT NULL' : ''}`;
}

interface TableColumn {
  name: string;
  type: string;
  nn: number;
  dflt: string | null;
  pk: number;
}

const COLUMN_TYPES = new Set(['TEXT', 'INTEGER', 'REAL', 'BLOB', 'ANY']);
