import type { StoredObject } from '../../model/stored.js';
import type { Executor, FulltextPort } from '../port.js';
import { keptLayout, layoutAttributes, noteLayoutChange, pendingLayout, textAttributes, type PendingLayout } from '../sql/search-layout.js';
import { runFulltext } from './fulltext-query.js';
import { wordsSql } from './fulltext-words.js';
import { dropFunctions, dropTriggers, holdsText, objectTriggers, rebuildObjectRows, storedLayout, writeLayout } from './fulltext-rows.js';

/**
 * The cross-object full-text index in PostgreSQL (contract.md §3 "Cross-object search"),
 * the counterpart of engine/store/sqlite/fulltext.ts with the same exactness and answers:
 *
 * - `_ss_search` holds one row per record that has any indexed text, laid out as SQLite lays
 *   it out (engine/store/sql/search-layout.ts: each text-like attribute's text in the order
 *   `_ss_search_layout` keeps for the object, the separator between them), and one row per
 *   document title (under the record and attribute it sits in), with a stored `tsvector`
 *   column (`tsv`) under a GIN index; search ranks with ts_rank. One row per record, not per
 *   attribute: PostgreSQL pays per index row (a heap tuple, its index entries, a tsvector) as
 *   FTS5 does; a bulk create of 10,000 records of three text attributes spent 230 ms of the
 *   database's time in the index rows' inserts with one row per attribute, 90 ms with one per
 *   record (the record rows alone: 140 ms).
 * - Text search configuration `schemasync_search`: PostgreSQL's `simple` dictionary (no
 *   stemming, no stop words: every word is findable by prefix, as with FTS5's unicode61)
 *   after `unaccent` when the extension can be created (case and accents fold). Without
 *   unaccent (the contrib files missing, or no right to create an extension) accents do not
 *   fold; `ensure` returns the setup's notice so the store can say so.
 * - Maintained by triggers, in the transaction of the write that changes the text
 *   (fulltext-rows.ts): per object, functions whose static SQL names its columns for inserts
 *   and updates (re-made with its triggers on every schema change of the object), a generic
 *   one for deletes, one for `_ss_documents`. A commit changes both, a rollback neither.
 * - Schema changes: the core calls beforeSchemaChange before its DDL (a trigger naming a
 *   column about to be dropped would block the DROP) and afterAttributeChange /
 *   afterObjectRename / dropObject after, in the same transaction; a change of an indexed
 *   attribute rebuilds the object's rows from the table, a text attribute added with no text
 *   in it joins the end of the layout and writes nothing (sql/search-layout.ts).
 *
 * Concurrency: the index rows are written by the same SERIALIZABLE transaction as the
 * record rows, so a reader's snapshot always sees the two agree.
 */

/**
 * Bumped when the layout below changes: an older (or no) layout is rebuilt on start.
 * 2: inserts indexed by a function per object.
 * 3: one row per record (its attributes' text joined) and `_ss_search_layout`, not one per attribute.
 * 4: the parser reads ASCII punctuation as spaces (fulltext-words.ts): emails, URLs, hosts and
 *    dotted numbers are indexed word by word, as FTS5 indexes them.
 */
export const SEARCH_LAYOUT = 4;
const SEARCH_CONFIG = 'schemasync_search';

const TABLES_SQL = `
CREATE TABLE _ss_search (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  object text COLLATE "C" NOT NULL,
  record_id text COLLATE "C" NOT NULL,
  attribute text COLLATE "C",
  document_id text COLLATE "C",
  text text NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('${SEARCH_CONFIG}', ${wordsSql('text')})) STORED
);
CREATE INDEX _ss_search_record ON _ss_search(object, record_id);
CREATE INDEX _ss_search_document ON _ss_search(document_id) WHERE document_id IS NOT NULL;
CREATE INDEX _ss_search_tsv ON _ss_search USING gin (tsv);
CREATE TABLE _ss_search_layout (object text COLLATE "C" PRIMARY KEY, attributes text NOT NULL);
`;

/**
 * The tsquery of a user's word (fulltext-query.ts): its tokens in order, the last a prefix, as
 * FTS5 reads the same word (`"e-mail"*`: `e` whole, then `mail` by prefix; so `e-mail` does
 * not find `ecole mail`). Made by phraseto_tsquery of its words-only form
 * (fulltext-words.ts) — the parser and configuration the indexed text goes through, so the
 * lexemes and their distances are the ones the text has — with `:*` put after the last
 * lexeme of its text form (lexemes are quoted, so the form ends in a quote). One call, not a
 * ts_debug per query, which cost ~0.4 ms of every search's two statements. The layout 3
 * function built the chain from ts_debug's rows, made every lexeme a prefix, and named a
 * hyphenated word's parts twice ('e-mail' → 'e-mail' <-> 'e' <-> 'mail' <-> 'e' <-> 'mail'),
 * five positions where the text has three: "e-mail" found nothing. `ensure` replaces an
 * older body in place.
 */
const PREFIX_FUNCTION_BODY = `SELECT regexp_replace(phraseto_tsquery('${SEARCH_CONFIG}', ${wordsSql('q')})::text, '''$', ''':*')::tsquery`;
const PREFIX_FUNCTION_SQL = `CREATE OR REPLACE FUNCTION _ss_prefix_tsquery(q text) RETURNS tsquery LANGUAGE sql STABLE AS $fn$\n  ${PREFIX_FUNCTION_BODY}\n$fn$`;

/** Brings an index of the current layout whose prefix function is an older one up to this one. */
async function ensurePrefixFunction(tx: Executor): Promise<void> {
  const row = await tx.get<{ src: string | null }>("SELECT prosrc AS src FROM pg_proc WHERE oid = to_regprocedure('_ss_prefix_tsquery(text)')");
  if (row?.src?.trim() !== PREFIX_FUNCTION_BODY) await tx.exec(PREFIX_FUNCTION_SQL);
}

/**
 * The functions every object shares: deletes (per statement, over the transition table; the
 * object is the trigger's argument), document titles, and the prefix query of a word.
 */
const FUNCTIONS_SQL = `
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
${PREFIX_FUNCTION_SQL};
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
 * The objects one push's hooks touched (FulltextPort.schemaBatch), by its transaction: each as
 * the last hook gave it, with the layout changes noted so far, settled once at the batch's
 * end. Not after each change: the core makes all of an object's column changes at its first
 * attribute step (sql/apply.ts foldingDdl), so settling after that step, from the object as
 * the catalog then has it, rebuilt rows from a column the folded DDL had already dropped
 * (a push renaming one text attribute and dropping another failed). By transaction, since
 * several run at once on PostgreSQL; a retried transaction is a new executor and batch.
 */
const batches = new WeakMap<Executor, Map<string, { o: StoredObject; p: PendingLayout }>>();

/**
 * Bring `o`'s rows, layout and triggers to `o` as it now is, after the changes `p` noted
 * (sql/search-layout.ts keptLayout says whether its rows stay).
 */
async function settle(tx: Executor, o: StoredObject, p: PendingLayout): Promise<void> {
  const kept = keptLayout(p, o);
  let fits = kept !== null;
  for (const n of kept?.mustBeEmpty ?? []) if (fits && (await holdsText(tx, o, n))) fits = false;
  if (!kept || !fits) {
    const attrs = textAttributes(o);
    await rebuildObjectRows(tx, o, attrs);
    await objectTriggers(tx, o, attrs);
    return;
  }
  if (kept.mustBeEmpty.length > 0) await writeLayout(tx, o.name, kept.layout);
  await objectTriggers(tx, o, layoutAttributes(o, kept.layout));
}

export const postgresFulltext: FulltextPort = {
  async ensure(tx, objects) {
    const row = await tx.get<{ value: string }>("SELECT value FROM _ss_meta WHERE key = 'search_layout'");
    const table = await tx.get<{ t: string | null }>("SELECT to_regclass('_ss_search') AS t");
    if (row && Number(row.value) === SEARCH_LAYOUT && table?.t) {
      await ensurePrefixFunction(tx);
      return false;
    }
    await tx.exec('DROP TABLE IF EXISTS _ss_search, _ss_search_layout CASCADE');
    await ensureConfig(tx);
    await tx.exec(TABLES_SQL);
    await tx.exec(FUNCTIONS_SQL);
    await tx.exec('INSERT INTO _ss_search(object, record_id, attribute, document_id, text) SELECT object, record_id, attribute, id, title FROM _ss_documents');
    for (const o of objects) {
      const attrs = textAttributes(o);
      await rebuildObjectRows(tx, o, attrs);
      await objectTriggers(tx, o, attrs);
    }
    // Layout 2's row-level function, which no trigger names any more (objectTriggers made them all again).
    await tx.exec('DROP FUNCTION IF EXISTS _ss_search_row()');
    await tx.run(
      "INSERT INTO _ss_meta (key, value) VALUES ('search_layout', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [String(SEARCH_LAYOUT)],
    );
    return true;
  },

  beforeSchemaChange: (tx, object) => dropTriggers(tx, object),

  async afterAttributeChange(tx, o, oldName, newName) {
    const batch = batches.get(tx);
    const p = batch?.get(o.name)?.p ?? pendingLayout(await storedLayout(tx, o.name));
    noteLayoutChange(p, o, oldName, newName);
    if (batch) batch.set(o.name, { o, p });
    else await settle(tx, o, p);
  },

  // Each touched object settled once, at the end (see `batches`); nested calls run in the outer one.
  async schemaBatch(tx, fn) {
    if (batches.has(tx)) return fn();
    const touched = new Map<string, { o: StoredObject; p: PendingLayout }>();
    batches.set(tx, touched);
    try {
      const out = await fn();
      for (const { o, p } of touched.values()) await settle(tx, o, p);
      return out;
    } finally {
      batches.delete(tx);
    }
  },

  async afterObjectRename(tx, from, o) {
    await tx.run('UPDATE _ss_search SET object = ? WHERE object = ?', [o.name, from]);
    await tx.run('UPDATE _ss_search_layout SET object = ? WHERE object = ?', [o.name, from]);
    // The triggers, dropped before the rename (beforeSchemaChange), are made again by the
    // renamed object's layout (now, or at the batch's end with what else the push changes),
    // and the old object's functions, which no trigger calls any more, go.
    const batch = batches.get(tx);
    const p = batch?.get(from)?.p ?? pendingLayout(await storedLayout(tx, o.name));
    if (batch) {
      batch.delete(from);
      batch.set(o.name, { o, p });
    } else await settle(tx, o, p);
    await dropFunctions(tx, from);
  },

  async dropObject(tx, object) {
    batches.get(tx)?.delete(object);
    await dropTriggers(tx, object);
    await tx.run('DELETE FROM _ss_search WHERE object = ?', [object]);
    await writeLayout(tx, object, []);
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
