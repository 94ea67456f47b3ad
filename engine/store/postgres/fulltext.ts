import { createHash } from 'node:crypto';
import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import { isMultiValued, isTextLike } from '../../model/types/registry.js';
import type { Executor, FulltextPort } from '../port.js';
import { tableIdent } from '../sql/idents.js';
import { runFulltext } from './fulltext-query.js';

/**
 * The cross-object full-text index in PostgreSQL (contract.md §3 "Cross-object search"),
 * the counterpart of engine/store/sqlite/fulltext.ts with the same exactness and answers:
 *
 * - `_ss_search` holds one row per (record, text-like attribute) and one per document title,
 *   with a stored `tsvector` column (`tsv`) under a GIN index; search ranks with ts_rank.
 *   (SQLite keeps one row per record, all its attributes' text joined, which FTS5 writes
 *   for half the cost; the query groups a record's rows here so both match the same.)
 * - Text search configuration `schemasync_search`: PostgreSQL's `simple` dictionary (no
 *   stemming, no stop words: every word is findable by prefix, as with FTS5's unicode61)
 *   after `unaccent` when the extension can be created (case and accents fold). Without
 *   unaccent (the contrib files missing, or no right to create an extension) accents do not
 *   fold; `ensure` returns the setup's notice so the store can say so.
 * - Maintained by triggers, in the transaction of the write that changes the text: generic
 *   PL/pgSQL functions for updates and deletes (the object and its text-like attributes are
 *   the trigger's arguments), one for `_ss_documents`, and for inserts, the hot path of
 *   every create, one function per object whose static SQL names its columns (re-made with
 *   its triggers on every schema change of the object). A commit changes both, a rollback
 *   neither.
 * - Schema changes: the core calls beforeSchemaChange before its DDL (a trigger naming a
 *   column about to be dropped would block the DROP) and afterAttributeChange /
 *   afterObjectRename / dropObject after, in the same transaction.
 *
 * Concurrency: the index rows are written by the same SERIALIZABLE transaction as the
 * record rows, so a reader's snapshot always sees the two agree.
 */

/**
 * Bumped when the layout below changes: an older (or no) layout is rebuilt on start.
 * 2: inserts indexed by a function per object (`insertFunctionSql`).
 */
export const SEARCH_LAYOUT = 2;
const SEARCH_CONFIG = 'schemasync_search';

// Which attributes are indexed is the registry's `fullText` (contract.md §3: text-like).
const textAttributes = (o: StoredObject): AttributeSpec[] => o.attributes.filter((a) => !a.system && isTextLike(a));

/**
 * Every alias below names its columns (`AS e(v)`) and every column reference is qualified:
 * a bare `e` would resolve to a record column of that name (attribute names are the
 * user's: `e`, `n`, `t`, `x` are all valid ones).
 */

/** A SQL string literal; names come validated (engine/model/names.ts), quoting is belt and braces. */
const lit = (s: string): string => `'${s.replaceAll("'", "''")}'`;

const TABLES_SQL = `
CREATE TABLE _ss_search (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  object text COLLATE "C" NOT NULL,
  record_id text COLLATE "C" NOT NULL,
  attribute text COLLATE "C" NOT NULL,
  document_id text COLLATE "C",
  text text NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('${SEARCH_CONFIG}', text)) STORED
);
CREATE INDEX _ss_search_record ON _ss_search(object, record_id);
CREATE INDEX _ss_search_attribute ON _ss_search(object, attribute);
CREATE INDEX _ss_search_document ON _ss_search(document_id) WHERE document_id IS NOT NULL;
CREATE INDEX _ss_search_tsv ON _ss_search USING gin (tsv);
`;

/**
 * The record tables' trigger functions. TG_ARGV: the object's name, then its text-like
 * attributes (`m:` before a multiselect, whose options are indexed joined by ", " as in
 * SQLite), so one function serves every table. Updates: per row (only when an indexed
 * column changes), the row read through to_jsonb(NEW). Deletes: per statement, set-based
 * over the transition table. Inserts: the object's own function (insertFunctionSql).
 */
const FUNCTIONS_SQL = `
CREATE OR REPLACE FUNCTION _ss_search_row() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  r jsonb;
  a text;
  t text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    DELETE FROM _ss_search WHERE object = TG_ARGV[0] AND record_id = OLD.id AND document_id IS NULL;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    r := to_jsonb(NEW);
    FOR i IN 1 .. TG_NARGS - 1 LOOP
      a := TG_ARGV[i];
      IF left(a, 2) = 'm:' THEN
        a := substr(a, 3);
        SELECT string_agg(e.v, ', ') INTO t FROM jsonb_array_elements_text((r ->> a)::jsonb) AS e(v);
      ELSE
        t := r ->> a;
      END IF;
      IF t IS NOT NULL AND t <> '' THEN
        INSERT INTO _ss_search(object, record_id, attribute, text) VALUES (TG_ARGV[0], NEW.id, a, t);
      END IF;
    END LOOP;
  END IF;
  RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION _ss_search_stmt() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM _ss_search WHERE object = TG_ARGV[0] AND document_id IS NULL AND record_id IN (SELECT id FROM _ss_old);
  RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION _ss_search_doc() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    DELETE FROM _ss_search WHERE document_id = OLD.id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO _ss_search(object, record_id, attribute, document_id, text) VALUES (NEW.object, NEW.record_id, NEW.attribute, NEW.id, NEW.title);
  END IF;
  RETURN NULL;
END
$fn$;
DROP TRIGGER IF EXISTS _ss_search_doc ON _ss_documents;
CREATE TRIGGER _ss_search_doc AFTER UPDATE OR DELETE OR INSERT ON _ss_documents FOR EACH ROW EXECUTE FUNCTION _ss_search_doc();
CREATE OR REPLACE FUNCTION _ss_prefix_tsquery(q text) RETURNS tsquery LANGUAGE sql STABLE AS $fn$
  SELECT to_tsquery('simple', string_agg('''' || replace(replace(x.l, '\\', '\\\\'), '''', '\\''') || ''':*', ' <-> ' ORDER BY d.ord, x.ord))
  FROM ts_debug('${SEARCH_CONFIG}', q) WITH ORDINALITY AS d(alias, description, token, dictionaries, dictionary, lexemes, ord),
       unnest(d.lexemes) WITH ORDINALITY AS x(l, ord)
$fn$;
`;

/** The token types of words (ts_token_type('default')) that fold through unaccent. */
const WORD_TOKENS = 'asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart';

/** Creates the search configuration; false when unaccent is not available (accents then do not fold). */
async function ensureConfig(tx: Executor): Promise<boolean> {
  const exists = await tx.get(`SELECT 1 AS x FROM pg_ts_config WHERE cfgname = ?`, [SEARCH_CONFIG]);
  let unaccent = (await tx.get("SELECT 1 AS x FROM pg_extension WHERE extname = 'unaccent'")) !== undefined;
  if (!unaccent) {
    // A failed CREATE EXTENSION aborts the transaction; the savepoint keeps the setup going.
    await tx.exec('SAVEPOINT _ss_unaccent');
    try {
      await tx.exec('CREATE EXTENSION IF NOT EXISTS unaccent');
      await tx.exec('RELEASE SAVEPOINT _ss_unaccent');
      unaccent = true;
    } catch {
      await tx.exec('ROLLBACK TO SAVEPOINT _ss_unaccent');
    }
  }
  if (exists === undefined) {
    await tx.exec(`CREATE TEXT SEARCH CONFIGURATION ${SEARCH_CONFIG} (COPY = simple)`);
    if (unaccent) await tx.exec(`ALTER TEXT SEARCH CONFIGURATION ${SEARCH_CONFIG} ALTER MAPPING FOR ${WORD_TOKENS} WITH unaccent, simple`);
  }
  return unaccent;
}

/**
 * The insert trigger's function of one object. Named from a hash of the object's name: a
 * function name, like any identifier, is cut at 63 bytes, and object names may be that long.
 */
const insertFunction = (object: string): string => `"_ss_search_ins_${createHash('sha256').update(object).digest('hex').slice(0, 24)}"`;

/**
 * Inserts are indexed by a function per object, not the generic one: its statement is static
 * SQL naming the object's columns, so PL/pgSQL plans it once per connection, where the
 * generic function plans one dynamic EXECUTE per text attribute on every insert. For a
 * single-record create that was the largest part of the database's work (backend CPU per
 * create of three text attributes, on a loaded 2-core machine: 410–480 µs generic, 220–250 µs
 * with this, 160–210 µs with no index at all). Rows are inserted attribute by attribute, each
 * in record order, as the generic function did. Names are validated (`[a-z][a-z0-9_]*`), so
 * they cannot close the dollar quote; the object's name is a literal.
 */
function insertFunctionSql(o: StoredObject, attrs: readonly AttributeSpec[]): string {
  const rows = attrs.map((a, i) => {
    const col = `n.${sqlIdent(a.name)}`;
    const text = isMultiValued(a) ? `(SELECT string_agg(e.v, ', ') FROM jsonb_array_elements_text((${col})::jsonb) AS e(v))` : col;
    return `(${i + 1}, ${lit(a.name)}, ${text})`;
  });
  return `CREATE OR REPLACE FUNCTION ${insertFunction(o.name)}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO _ss_search(object, record_id, attribute, text)
  SELECT ${lit(o.name)}, n.id, x.a, x.t FROM _ss_new AS n, LATERAL (VALUES ${rows.join(', ')}) AS x(o, a, t)
  WHERE x.t IS NOT NULL AND x.t <> '' ORDER BY x.o, n."_ss_seq";
  RETURN NULL;
END
$fn$`;
}

async function dropTriggers(tx: Executor, object: string): Promise<void> {
  const table = tableIdent(object);
  const exists = await tx.get<{ t: string | null }>('SELECT to_regclass(?) AS t', [table]);
  if (exists?.t) {
    await tx.exec(`DROP TRIGGER IF EXISTS _ss_search_ins ON ${table}; DROP TRIGGER IF EXISTS _ss_search_del ON ${table}; DROP TRIGGER IF EXISTS _ss_search_upd ON ${table}`);
  }
  await tx.exec(`DROP FUNCTION IF EXISTS ${insertFunction(object)}()`);
}

/** The record table's triggers for its current text-like attributes (none: no triggers). */
async function objectTriggers(tx: Executor, o: StoredObject): Promise<void> {
  await dropTriggers(tx, o.name);
  const attrs = textAttributes(o);
  if (attrs.length === 0) return;
  const table = tableIdent(o.name);
  const args = [lit(o.name), ...attrs.map((a) => lit(isMultiValued(a) ? `m:${a.name}` : a.name))].join(', ');
  // Inserts and deletes once per statement over its transition table: a bulk create of
  // 10,000 rows indexes them in one INSERT … SELECT, not 10,000 trigger calls
  // (10,000 rows of two text attributes, best of 4 on a loaded 2-core machine: 534 ms, against
  // 832 ms with row triggers and 191 ms with no index at all).
  await tx.exec(insertFunctionSql(o, attrs));
  await tx.exec(`CREATE TRIGGER _ss_search_ins AFTER INSERT ON ${table} REFERENCING NEW TABLE AS _ss_new FOR EACH STATEMENT EXECUTE FUNCTION ${insertFunction(o.name)}()`);
  await tx.exec(`CREATE TRIGGER _ss_search_del AFTER DELETE ON ${table} REFERENCING OLD TABLE AS _ss_old FOR EACH STATEMENT EXECUTE FUNCTION _ss_search_stmt(${args})`);
  // Only a change of an indexed column re-indexes (a relation or number update costs nothing here).
  const cols = attrs.map((a) => `"${a.name}"`).join(', ');
  await tx.exec(`CREATE TRIGGER _ss_search_upd AFTER UPDATE OF ${cols} ON ${table} FOR EACH ROW EXECUTE FUNCTION _ss_search_row(${args})`);
}

/** Index the stored values of some text-like attributes of `o`. */
async function fillAttributes(tx: Executor, o: StoredObject, attrs: readonly AttributeSpec[]): Promise<void> {
  const table = tableIdent(o.name);
  for (const a of attrs) {
    const col = `r."${a.name}"`;
    const text = isMultiValued(a) ? `(SELECT string_agg(e.v, ', ') FROM jsonb_array_elements_text((${col})::jsonb) AS e(v))` : col;
    await tx.run(
      `INSERT INTO _ss_search(object, record_id, attribute, text) SELECT ?, r.id, ?, x.t FROM ${table} AS r, LATERAL (SELECT ${text} AS t) AS x WHERE x.t IS NOT NULL AND x.t <> '' ORDER BY r."_ss_seq"`,
      [o.name, a.name],
    );
  }
}

export const postgresFulltext: FulltextPort = {
  async ensure(tx, objects) {
    const row = await tx.get<{ value: string }>("SELECT value FROM _ss_meta WHERE key = 'search_layout'");
    const table = await tx.get<{ t: string | null }>("SELECT to_regclass('_ss_search') AS t");
    if (row && Number(row.value) === SEARCH_LAYOUT && table?.t) return false;
    await tx.exec('DROP TABLE IF EXISTS _ss_search CASCADE');
    await ensureConfig(tx);
    await tx.exec(TABLES_SQL);
    await tx.exec(FUNCTIONS_SQL);
    await tx.exec('INSERT INTO _ss_search(object, record_id, attribute, document_id, text) SELECT object, record_id, attribute, id, title FROM _ss_documents');
    for (const o of objects) {
      await fillAttributes(tx, o, textAttributes(o));
      await objectTriggers(tx, o);
    }
    await tx.run(
      "INSERT INTO _ss_meta (key, value) VALUES ('search_layout', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [String(SEARCH_LAYOUT)],
    );
    return true;
  },

  beforeSchemaChange: (tx, object) => dropTriggers(tx, object),

  async afterAttributeChange(tx, o, oldName, newName) {
    for (const n of new Set([oldName, newName])) {
      if (n !== undefined) await tx.run('DELETE FROM _ss_search WHERE object = ? AND attribute = ? AND document_id IS NULL', [o.name, n]);
    }
    const now = newName === undefined ? undefined : o.attributes.find((a) => a.name === newName);
    if (now && !now.system && isTextLike(now)) await fillAttributes(tx, o, [now]);
    await objectTriggers(tx, o);
  },

  // Trigger DDL costs PostgreSQL no re-read of the whole schema (SQLite's reason to batch):
  // each hook keeps its own upkeep.
  schemaBatch: (_tx, fn) => fn(),

  async afterObjectRename(tx, from, o) {
    await tx.run('UPDATE _ss_search SET object = ? WHERE object = ?', [o.name, from]);
    // The triggers moved with the table but name the old object: made again, and then the
    // old name's insert function, which they no longer use, goes.
    await objectTriggers(tx, o);
    await tx.exec(`DROP FUNCTION IF EXISTS ${insertFunction(from)}()`);
  },

  async dropObject(tx, object) {
    await dropTriggers(tx, object);
    await tx.run('DELETE FROM _ss_search WHERE object = ?', [object]);
  },

  // The triggers index every write, single or bulk, in its own statement: nothing to do around it.
  beginWrite: async () => ({ finish: async () => {} }),

  query: runFulltext,
};

/** Whether the search configuration folds accents (unaccent available), for the store's notice. */
export async function foldsAccents(ex: Executor): Promise<boolean> {
  const row = await ex.get(
    "SELECT 1 AS x FROM pg_ts_config_map m JOIN pg_ts_config c ON c.oid = m.mapcfg JOIN pg_ts_dict d ON d.oid = m.mapdict WHERE c.cfgname = ? AND d.dictname = 'unaccent'",
    [SEARCH_CONFIG],
  );
  return row !== undefined;
}
