import { createHash } from 'node:crypto';
import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import type { Executor } from '../port.js';
import { sqlLiteral as lit, tableIdent } from '../sql/idents.js';
import { emptyRecordText, holdsTextSql, recordText } from '../sql/search-rows.js';
import { postgresDialect } from './dialect.js';
import { parseLayout } from '../sql/search-layout.js';

// A record's row of the PostgreSQL search index (fulltext.ts): its text, the triggers that
// keep it, and its rebuild from the table.

/*
 * A record's row text (sql/search-rows.ts recordText): PostgreSQL's parser takes the separator
 * for a word (an empty lexeme at a position of its own), so a phrase never runs from one
 * attribute into the next, as in SQLite.
 */

/**
 * The INSERT … SELECT of the rows of the records `from` holds (read as `row`), in their order
 * of creation: one per record that has any text.
 */
function insertRows(o: StoredObject, attrs: readonly AttributeSpec[], row: string, from: string): string {
  return (
    `INSERT INTO _ss_search(object, record_id, text) SELECT ${lit(o.name)}, ${row}.id, x.t FROM ${from}, ` +
    `LATERAL (SELECT ${recordText(postgresDialect, attrs, row)} AS t) AS x WHERE x.t <> ${emptyRecordText(attrs)} ORDER BY ${row}.${postgresDialect.insertionOrder}`
  );
}

/**
 * The trigger functions of one object, named from a hash of its name: a function name, like
 * any identifier, is cut at 63 bytes, and object names may be that long.
 */
const objectFunction = (object: string, event: 'ins' | 'upd'): string =>
  `"_ss_search_${event}_${createHash('sha256').update(object).digest('hex').slice(0, 24)}"`;

/**
 * Inserts and updates are indexed by functions of the object's own, not generic ones: their
 * statements are static SQL naming the object's columns in its layout, so PL/pgSQL plans them
 * once per connection (a generic function plans a dynamic EXECUTE per attribute on every
 * write). Inserts once per statement over its transition table: a bulk create of 1,000 rows
 * indexes them in one INSERT … SELECT. Updates per row, and only when an indexed column
 * changes (PostgreSQL allows no transition table on an `UPDATE OF` trigger). Names are
 * validated (`[a-z][a-z0-9_]*`), so they cannot close the dollar quote.
 */
function functionsSql(o: StoredObject, attrs: readonly AttributeSpec[]): string[] {
  const values = `VALUES (${lit(o.name)}, NEW.id, ${recordText(postgresDialect, attrs, 'NEW')})`;
  return [
    `CREATE OR REPLACE FUNCTION ${objectFunction(o.name, 'ins')}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  ${insertRows(o, attrs, 'n', '_ss_new AS n')};
  RETURN NULL;
END
$fn$`,
    `CREATE OR REPLACE FUNCTION ${objectFunction(o.name, 'upd')}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM _ss_search WHERE object = ${lit(o.name)} AND record_id = OLD.id AND document_id IS NULL;
  INSERT INTO _ss_search(object, record_id, text) SELECT * FROM (${values}) AS v(o, r, t) WHERE v.t <> ${emptyRecordText(attrs)};
  RETURN NULL;
END
$fn$`,
  ];
}

export async function dropTriggers(tx: Executor, object: string): Promise<void> {
  const table = tableIdent(object);
  const exists = await tx.get<{ t: string | null }>('SELECT to_regclass(?) AS t', [table]);
  if (exists?.t) {
    await tx.exec(`DROP TRIGGER IF EXISTS _ss_search_ins ON ${table}; DROP TRIGGER IF EXISTS _ss_search_del ON ${table}; DROP TRIGGER IF EXISTS _ss_search_upd ON ${table}`);
  }
  await dropFunctions(tx, object);
}

/** The object's trigger functions (no trigger may still call them). */
export const dropFunctions = (tx: Executor, object: string): Promise<void> =>
  tx.exec(`DROP FUNCTION IF EXISTS ${objectFunction(object, 'ins')}(); DROP FUNCTION IF EXISTS ${objectFunction(object, 'upd')}()`);

/** The record table's triggers for the layout `attrs` (none: no triggers). */
export async function objectTriggers(tx: Executor, o: StoredObject, attrs: readonly AttributeSpec[]): Promise<void> {
  await dropTriggers(tx, o.name);
  if (attrs.length === 0) return;
  const table = tableIdent(o.name);
  for (const sql of functionsSql(o, attrs)) await tx.exec(sql);
  await tx.exec(`CREATE TRIGGER _ss_search_ins AFTER INSERT ON ${table} REFERENCING NEW TABLE AS _ss_new FOR EACH STATEMENT EXECUTE FUNCTION ${objectFunction(o.name, 'ins')}()`);
  await tx.exec(`CREATE TRIGGER _ss_search_del AFTER DELETE ON ${table} REFERENCING OLD TABLE AS _ss_old FOR EACH STATEMENT EXECUTE FUNCTION _ss_search_stmt(${lit(o.name)})`);
  // Only a change of an indexed column re-indexes (a relation or number update costs nothing here).
  const cols = attrs.map((a) => sqlIdent(a.name)).join(', ');
  await tx.exec(`CREATE TRIGGER _ss_search_upd AFTER UPDATE OF ${cols} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${objectFunction(o.name, 'upd')}()`);
}

/** The attribute names an object's rows are laid out by, as stored (none: no layout yet). */
export async function storedLayout(ex: Executor, object: string): Promise<string[] | undefined> {
  const row = await ex.get<{ attributes: unknown }>('SELECT attributes FROM _ss_search_layout WHERE object = ?', [object]);
  return row === undefined ? undefined : parseLayout(object, row.attributes);
}

export async function writeLayout(tx: Executor, object: string, names: readonly string[]): Promise<void> {
  if (names.length === 0) await tx.run('DELETE FROM _ss_search_layout WHERE object = ?', [object]);
  else await tx.run('INSERT INTO _ss_search_layout (object, attributes) VALUES (?, ?) ON CONFLICT (object) DO UPDATE SET attributes = excluded.attributes', [object, JSON.stringify(names)]);
}

/** Whether any record of `o` has text in attribute `name` (a multiselect: any option). */
export async function holdsText(ex: Executor, o: StoredObject, name: string): Promise<boolean> {
  const sql = holdsTextSql(postgresDialect, o, name);
  return sql !== undefined && (await ex.get(sql)) !== undefined;
}

/** The rows of `o`'s records made again from its table by the layout `attrs`, which is stored as its layout. */
export async function rebuildObjectRows(tx: Executor, o: StoredObject, attrs: readonly AttributeSpec[]): Promise<void> {
  await tx.run('DELETE FROM _ss_search WHERE object = ? AND document_id IS NULL', [o.name]);
  if (attrs.length > 0) await tx.run(insertRows(o, attrs, 'r', `${tableIdent(o.name)} AS r`));
  await writeLayout(tx, o.name, attrs.map((a) => a.name));
}
