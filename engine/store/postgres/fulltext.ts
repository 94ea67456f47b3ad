import type { AttributeSpec } from '../../model/attribute.js';
import type { StoredObject } from '../../model/stored.js';
import { isMultiValued, isTextLike } from '../../model/types/registry.js';
import type { Executor, FulltextPort } from '../port.js';
import { tableIdent } from '../sql/idents.js';
import { runFulltext } from './fulltext-query.js';

/**
 * The cross-object full-text index in PostgreSQL (contract.md §3 "Cross-object search"),
 * the counterpart of engine/store/sqlite/fulltext.ts with the same layout and exactness:
 *
 * - `_ss_search` holds one row per (record, text-like attribute) and one per document title,
 *   with a stored `tsvector` column (`tsv`) under a GIN index; search ranks with ts_rank.
 * - Text search configuration `schemasync_search`: PostgreSQL's `simple` dictionary (no
 *   stemming, no stop words: every word is findable by prefix, as with FTS5's unicode61)
 *   after `unaccent` when the extension can be created (case and accents fold). Without
 *   unaccent (the contrib files missing, or no right to create an extension) accents do not
 *   fold; `ensure` returns the setup's notice so the store can say so.
 * - Maintained by triggers, in the transaction of the write that changes the text: one
 *   set of generic PL/pgSQL functions on every record table (the object and its text-like
 *   attributes are the trigger's arguments, so a schema change re-creates three triggers,
 *   no code), and one on `_ss_documents`. A commit changes both, a rollback neither.
 * - Schema changes: the core calls beforeSchemaChange before its DDL (a trigger naming a
 *   column about to be dropped would block the DROP) and afterAttributeChange /
 *   afterObjectRename / dropObject after, in the same transaction.
 *
 * Concurrency: the index rows are written by the same SERIALIZABLE transaction as the
 * record rows, so a reader's snapshot always sees the two agree.
 */

/** Bumped when the layout below changes: an older (or no) layout is rebuilt on start. */
export const SEARCH_LAYOUT = 1;
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
 * column changes), the row read through to_jsonb(NEW). Inserts and deletes: per statement,
 * set-based over the transition table (attribute names quoted by format's %I).
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
DECLARE
  a text;
  t text;
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM _ss_search WHERE object = TG_ARGV[0] AND document_id IS NULL AND record_id IN (SELECT id FROM _ss_old);
    RETURN NULL;
  END IF;
  FOR i IN 1 .. TG_NARGS - 1 LOOP
    a := TG_ARGV[i];
    IF left(a, 2) = 'm:' THEN
      a := substr(a, 3);
      t := format('(SELECT string_agg(e.v, '', '') FROM jsonb_array_elements_text((n.%I)::jsonb) AS e(v))', a);
    ELSE
      t := format('n.%I', a);
    END IF;
    EXECUTE format('INSERT INTO _ss_search(object, record_id, attribute, text) SELECT $1, n.id, $2, x.t FROM _ss_new AS n, LATERAL (SELECT %s AS t) AS x WHERE x.t IS NOT NULL AND x.t <> %L ORDER BY n."_ss_seq"', t, '')
      USING TG_ARGV[0], a;
  END LOOP;
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

async function dropTriggers(tx: Executor, object: string): Promise<void> {
  const table = tableIdent(object);
  const exists = await tx.get<{ t: string | null }>('SELECT to_regclass(?) AS t', [table]);
  if (!exists?.t) return;
  await tx.exec(`DROP TRIGGER IF EXISTS _ss_search_ins ON ${table}; DROP TRIGGER IF EXISTS _ss_search_del ON ${table}; DROP TRIGGER IF EXISTS _ss_search_upd ON ${table}`);
}

/** The record table's triggers for its current text-like attributes (none: no triggers). */
async function objectTriggers(tx: Executor, o: StoredObject): Promise<void> {
  await dropTriggers(tx, o.name);
  const attrs = textAttributes(o);
  if (attrs.length === 0) return;
  const table = tableIdent(o.name);
  const args = [lit(o.name), ...attrs.map((a) => lit(isMultiValued(a) ? `m:${a.name}` : a.name))].join(', ');
  // Inserts and deletes once per statement over its transition table: a bulk create of
  // 10,000 rows indexes them in one INSERT … SELECT per attribute, not 10,000 trigger calls
  // (10,000 rows of two text attributes, best of 4 on a loaded 2-core machine: 534 ms, against
  // 832 ms with row triggers and 191 ms with no index at all).
  await tx.exec(`CREATE TRIGGER _ss_search_ins AFTER INSERT ON ${table} REFERENCING NEW TABLE AS _ss_new FOR EACH STATEMENT EXECUTE FUNCTION _ss_search_stmt(${args})`);
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
    // The triggers moved with the table but name the old object: made again.
    await objectTriggers(tx, o);
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
