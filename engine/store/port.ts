import type { AttributeSpec, AttributeType } from '../model/attribute.js';
import type { StoredObject } from '../model/stored.js';
import type { SearchHit } from '../model/search-hit.js';
import type { RateCounter } from './types.js';

/**
 * The backend port (architecture.md "The backend port"): what the backend-neutral store
 * (engine/store/sql/) needs from a database. A backend is a folder under engine/store/
 * (sqlite/ today, postgres/ next) that exports one `Backend`; nothing else in engine/ knows
 * which database it runs on.
 *
 * Shared SQL (engine/store/sql/) is written with `?` placeholders, identifiers quoted from
 * validated names (engine/model/names.ts sqlIdent) and every value bound. A driver whose
 * database numbers its parameters ($1, $2 …) rewrites `?` itself; the shared SQL never
 * contains a `?` that is not a placeholder (no `?` in literals or identifiers).
 */

/** A value a statement binds or a row column holds, as the driver sees it. */
export type Param = string | number | bigint | null;

/**
 * What a database failure means to the store, so no caller reads a vendor error code:
 * - `unique`: a unique constraint refused a write (the store names the offenders itself);
 * - `busy`: another connection holds the lock past the wait (SQLite SQLITE_BUSY, PostgreSQL
 *   serialization_failure / deadlock_detected: the write may be retried as a whole);
 * - `unwritable`: the database cannot be opened or written (permission, read-only);
 * - `unavailable`: the database cannot be reached or refuses the login (a server stopped or
 *   restarting, a wrong password): answered as a masked 503; the next call tries again
 *   (PostgreSQL; SQLite opens a file and never says this);
 * - `other`: anything else (a bug, a corrupt database): reported as it is, masked in a 5xx.
 */
export type DbErrorKind = 'unique' | 'busy' | 'unwritable' | 'unavailable' | 'other';

/**
 * A handle valid inside one transaction (the `tx` of Driver.transaction / snapshot), or the
 * driver itself for a lone statement. Rows come back with the column names the SQL gives
 * (`AS n`); counts may come back as number, bigint or a decimal string (PostgreSQL's
 * COUNT is bigint): decode them with engine/store/sql/rows.ts `intColumn`, never a cast.
 */
export interface Executor {
  all<R>(sql: string, params?: readonly Param[]): Promise<R[]>;
  get<R>(sql: string, params?: readonly Param[]): Promise<R | undefined>;
  run(sql: string, params?: readonly Param[]): Promise<{ changes: number }>;
  /** One or more statements without parameters (DDL). */
  exec(sql: string): Promise<void>;
  /**
   * One statement run once per row of parameters, with no await per row: the bulk write
   * paths (10,000 records) stay one tight loop in SQLite and may be one multi-row statement
   * (or a pipelined batch) elsewhere. `rows` is iterated once, in order; each array it
   * yields is read before the next is asked for, so a producer may reuse one array (copy
   * it if you keep it). Stops at the first failing row and throws its error (classify it);
   * the caller's transaction rolls back. Returns the total of changed rows.
   */
  runBatch(sql: string, rows: Iterable<readonly Param[]>): Promise<{ changes: number }>;
}

/** How a write transaction may be run (Driver.transaction). */
export interface TransactionOptions {
  /**
   * `fn` may share one database transaction with other such writes waiting at the same time,
   * each inside its own savepoint (group commit: one COMMIT for many writes). The caller's
   * promise still settles only once its write is committed (or refused alone); only a write
   * that keeps no in-process state tied to its own commit may ask (engine/store/sql/store.ts
   * says which do). A driver may ignore it.
   */
  group?: boolean;
  /**
   * Tables (quoted identifiers) whose writers this write should wait for rather than race.
   * A driver that runs writes optimistically (SERIALIZABLE, retried on conflict) may, from its
   * second try on, lock them before the try's snapshot (PostgreSQL: SHARE mode — reads go on,
   * writes wait until this one ends), so a schema write is not starved by a steady stream of
   * record writes that make it fail serialization on every try. Read at each try; a name that
   * no longer exists is skipped by trying without the lock. Correctness never rests on it.
   */
  waitFor?: () => readonly string[];
  /**
   * A table (quoted identifier) that every write of this kind locks in a mode that conflicts
   * with itself, at each try's start and before its snapshot, so no two such writes run at
   * once and each sees the one before it committed. PostgreSQL: SHARE ROW EXCLUSIVE, which
   * readers of the table (ACCESS SHARE) and row locks of foreign keys pass. A driver that
   * serialises every write (SQLite) ignores it.
   */
  oneAtATime?: string;
}

export interface Driver extends Executor {
  readonly dialect: Dialect;
  /**
   * One write transaction: all of `fn` lands or none of it. The invariants the store keeps
   * (engine/store/sql/records.ts, keys.ts, idempotency.ts, sources.ts say which) rely on
   * this: no other write interleaves with `fn` in a way that changes what `fn` read. SQLite
   * gives it by serialising write transactions in the process and BEGIN IMMEDIATE across
   * processes; a PostgreSQL driver must give it with SERIALIZABLE + retry of the whole `fn`
   * on `busy`, or the locks the invariant comments name. `fn` may run more than once on a
   * retrying driver: it must not have effects outside `tx` (the store keeps its caches
   * consistent through `onRollback` below, never by side effects it cannot undo).
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Several reads that see one committed state (a search page and its total; the object
   * cache's two tables). SQLite: the queue holds the connection; PostgreSQL: a READ ONLY
   * REPEATABLE READ transaction (or any equivalent snapshot).
   */
  snapshot<T>(fn: (ex: Executor) => Promise<T>): Promise<T>;
  classify(err: unknown): DbErrorKind;
  close(): Promise<void>;
}

/** Sort direction plus where NULLs go, explicit so a keyset cursor is the same on every backend. */
export interface OrderKey {
  sql: string;
  desc: boolean;
}

/**
 * The SQL that differs between databases; identifiers come quoted from validated names,
 * `param`/`params` arguments are placeholders the caller bound (`?`).
 */
export interface Dialect {
  /** The n-th (1-based) bound parameter as shared SQL writes it: `?` (drivers rewrite if needed). */
  placeholder(n: number): string;
  /** True when the JSON list in `column` has an element equal to any of `params`. */
  listContainsAny(column: string, params: readonly string[]): string;
  /**
   * The set of the elements of a JSON list of strings bound at `param`, usable as
   * `x IN <set>` (SQLite: a json_each subquery; PostgreSQL: jsonb_array_elements_text of
   * the parameter cast to jsonb): one statement for any number of ids.
   */
  jsonListSet(param: string): string;
  /** True when the JSON list in `column` has an element in `set` (a jsonListSet). */
  listHasAnyIn(column: string, set: string): string;
  /** True when every element of the JSON list in `column` is in `set` (empty list: true). */
  listAllIn(column: string, set: string): string;
  /** The JSON list in `column` without the elements in `set`, order kept; NULL when none is left. */
  listWithout(column: string, set: string): string;
  /**
   * The elements of the JSON list of strings in `column` joined by ', ', in order (a
   * multiselect's text in the search index); NULL for NULL or an empty list.
   */
  listJoined(column: string): string;
  /** `a` equals `b`, NULL equal to NULL (SQLite `IS`, PostgreSQL `IS NOT DISTINCT FROM`). */
  nullSafeEqual(a: string, b: string): string;
  /** `a` differs from `b`, NULL distinct from any value. */
  nullSafeDistinct(a: string, b: string): string;
  /** NOT of a condition that may be NULL, NULL counting as false (`not` in filters keeps nulls). */
  notOrNull(condition: string): string;
  /**
   * The ORDER BY term for a key with the store's NULL placement: NULLs first ascending and
   * last descending (SQLite's own order, which existing cursors encode).
   */
  orderTerm(key: OrderKey): string;
  /** Case-insensitive substring test (`contains` on text). */
  containsText(column: string, param: string): string;
  /** Prefix test (`startsWith`); `param` is bound twice (the dialect says how it uses it). */
  startsWith(column: string, param: string, again: string): string;
  /**
   * A column expression giving a record table's rows in insertion order (oldest first):
   * SQLite `_rowid_` (never `rowid`/`oid`, which are valid attribute names); a backend
   * without one keeps a hidden sequence column in its record tables (SchemaDdl).
   */
  readonly insertionOrder: string;
}

/**
 * How one attribute type's values sit in this backend's columns (architecture.md "codecs per
 * backend"): the registry (engine/model/types) says what a value is; the codec how it is
 * stored. `Record<AttributeType, Codec>` in Backend, so a new type without a codec fails to
 * compile. Column types are the DDL's business (SchemaDdl), not the codec's.
 */
export interface Codec {
  /** A parsed (registry-checked) non-null value → its column value. */
  encode(value: unknown, spec: AttributeSpec): Param;
  /** A non-null column value as the driver returns it → the API value. */
  decode(column: unknown, spec: AttributeSpec): unknown;
  /**
   * One element of a list column as the dialect's list tests compare it (filters on list
   * types compare one element, engine/model/filter-operand.ts). Absent: bound as it is.
   */
  element?(value: unknown, spec: AttributeSpec): Param;
}

/**
 * DDL on record tables (one table per object, `"r_<object>"`, a column per attribute,
 * system columns id, version, created_at, updated_at, created_by; engine/store/sql/idents.ts
 * names tables and indexes). Every member runs inside the caller's transaction (`tx`) and
 * must be transactional there: a failed push leaves the old schema (SQLite and PostgreSQL
 * DDL both are). The shared core keeps the catalog rows (`_ss_objects`, `_ss_attributes`);
 * these touch only record tables and their indexes.
 */
export interface SchemaDdl {
  createRecordTable(tx: Executor, object: string, attributes: readonly AttributeSpec[]): Promise<void>;
  dropRecordTable(tx: Executor, object: string): Promise<void>;
  renameRecordTable(tx: Executor, from: string, to: string): Promise<void>;
  addColumn(tx: Executor, object: string, spec: AttributeSpec): Promise<void>;
  /** Drops the attribute's index (named from `attributeId`) and its column. */
  dropColumn(tx: Executor, object: string, attributeId: string, name: string): Promise<void>;
  /** Indexes naming the column must follow (SQLite rewrites them itself). */
  renameColumn(tx: Executor, object: string, from: string, to: string): Promise<void>;
  /**
   * The index an attribute should have: unique → UNIQUE, relation → plain, else none.
   * `fresh`: the attribute is new (or its column just rebuilt): there is no index to drop.
   */
  syncIndex(tx: Executor, object: string, attributeId: string, spec: AttributeSpec, fresh: boolean): Promise<void>;
  /**
   * A type change (or a relation/document `multiple` toggle) of column `from.name` to `to`
   * (same name: a rename runs before): every stored value converted with
   * engine/store/sql/convert.ts `convertColumnValue` (the registry's convertFrom, then this
   * backend's codecs); a value that cannot convert becomes NULL (callers refused or
   * approved that loss before). The attribute's own index is dropped and left to syncIndex;
   * the table's other indexes and the rows' insertion order are kept.
   */
  changeColumnType(tx: Executor, object: string, attributeId: string, from: AttributeSpec, to: AttributeSpec): Promise<void>;
  /**
   * Several column changes of one object in one push, in the order the push's steps make
   * them (engine/store/sql/column-changes.ts): the same end state (columns, types, values,
   * indexes, rows' insertion order) as the per-change members above called in that order.
   * A backend may do them one by one (PostgreSQL) or at once: SQLite rebuilds the table
   * once instead of once per change, each rebuild costing a few scans of the whole schema.
   */
  changeColumns(tx: Executor, object: string, changes: readonly ColumnChange[]): Promise<void>;
}

/**
 * One column change (SchemaDdl.changeColumns), with what the per-change member takes:
 * `add` ↔ addColumn, `rename` ↔ renameColumn, `retype` ↔ changeColumnType, `drop` ↔ dropColumn.
 */
export type ColumnChange =
  | { kind: 'add'; spec: AttributeSpec }
  | { kind: 'rename'; from: string; to: string }
  | { kind: 'retype'; attributeId: string; from: AttributeSpec; to: AttributeSpec }
  | { kind: 'drop'; attributeId: string; name: string };

/** A cross-object search request (contract.md §3 "Cross-object search"). */
export interface FulltextInput {
  query: string;
  /** The objects to search: already cut to those the key may read (null: every object). */
  objects: readonly string[] | null;
  limit: number;
}

/**
 * The cross-object search index (contract.md §3). It must be exact as `query` sees it: a
 * query finds every write committed before it (and those of its own transaction), nothing of
 * a rolled-back one. The core calls these hooks inside the write's transaction; a backend
 * that keeps the index by triggers leaves the record hooks empty (SQLite today), one that
 * does not indexes there. A backend may finish part of the upkeep later if its `query`
 * finishes it first (SQLite adds single writes' FTS5 entries so: sqlite/fulltext-pending.ts).
 * Document titles: the backend indexes `_ss_documents` rows itself (triggers or the files
 * module's calls), under the record and attribute that hold them.
 */
export interface FulltextPort {
  /**
   * On open, inside the setup transaction: build the index when it is missing or of an
   * older layout. Returns whether it was (re)built, so the store can say so.
   */
  ensure(tx: Executor, objects: readonly StoredObject[]): Promise<boolean>;
  /** Before DDL on the object's table (a dropped column must not be named by a trigger). */
  beforeSchemaChange(tx: Executor, object: string): Promise<void>;
  /**
   * After an object was created or one of its attributes added, changed, renamed or dropped
   * (`o` as it is now): entries of `oldName` go, entries of `newName` are rebuilt from the
   * table. Either may be undefined (created / dropped).
   */
  afterAttributeChange(tx: Executor, o: StoredObject, oldName: string | undefined, newName: string | undefined): Promise<void>;
  /**
   * Run `fn`, the steps of one push inside `tx`, with the per-object upkeep of the hooks
   * above (search triggers) done once per object at its end, for the object as it then is,
   * instead of after every change: a push changing several attributes of one object pays
   * for its triggers once. Inside `fn` every hook keeps its contract except that a touched
   * object's record writes are not indexed by triggers until `fn` ends; the only record
   * writes a push makes are a default's backfill, whose attribute the following
   * afterAttributeChange re-indexes from the table. A throw leaves the index to the
   * caller's rollback. Nested calls run inside the outer one.
   */
  schemaBatch<T>(tx: Executor, fn: () => Promise<T>): Promise<T>;
  /** The object was renamed from `from` (its table already renamed): entries follow. */
  afterObjectRename(tx: Executor, from: string, o: StoredObject): Promise<void>;
  /** The object is about to be dropped: its entries (record and document) go. */
  dropObject(tx: Executor, object: string): Promise<void>;
  /**
   * Before the statements of one record write of `o` (a create or update of one record or
   * a batch), in its transaction: returns what to call right after them. A trigger-kept
   * index may turn its per-row upkeep off here and index the batch set-based in `finish`
   * (SQLite, issue 17); a backend that indexes per statement returns a no-op. Deletes need
   * no call: their entries go with the rows.
   */
  beginWrite(tx: Executor, o: StoredObject, write: RecordWrite): Promise<{ finish(): Promise<void> }>;
  /** Best first, at most `limit` records (the best-matching attribute of each), with snippets; after every committed write (see above). */
  query(ex: Executor, input: FulltextInput): Promise<SearchHit[]>;
}

/** A record write as the search index sees it. */
export interface RecordWrite {
  kind: 'create' | 'update';
  /** The records written, in order. */
  ids: readonly string[];
  /** The attributes the write sets (a create: all of them). */
  attributes: readonly string[];
}

/**
 * A database the store runs on: the one thing a backend folder exports (through its
 * `open…Backend` function). The shared core (engine/store/sql/) uses nothing else.
 */
export interface Backend {
  /** For messages and tests only; no store code branches on it. */
  readonly name: string;
  readonly driver: Driver;
  readonly dialect: Dialect;
  readonly codecs: Record<AttributeType, Codec>;
  readonly ddl: SchemaDdl;
  readonly fulltext: FulltextPort;
  /**
   * Inside the first transaction on open: create the `_ss_` tables (engine/store/sqlite/
   * database.ts lists them: meta, objects, attributes, views, roles, sources,
   * source_history, keys, idempotency; files/documents: the files module's), or bring an
   * older layout forward; refuse a newer one. Idempotent: every process runs it on open.
   */
  setup(tx: Executor): Promise<void>;
  /**
   * A token that changes whenever another connection may have changed the catalog (objects,
   * attributes) since this process last read it; the object cache is re-read when it moves.
   * SQLite: its data_version pragma (moves on other connections' commits only). A backend may
   * answer from `_ss_meta` 'catalog_version', which the core bumps in every schema write.
   */
  catalogToken(ex: Executor): Promise<unknown>;
  /**
   * How long a process may reuse the keys version it read (Store.keysVersion, which every
   * authenticated request asks): 0 or absent, never (SQLite: a revoke through another
   * process on the same data folder is refused on the very next request, issue 21). A
   * backend where that read costs round trips to a server may say up to 1,000 ms: issue 15
   * bounds it ("a revoked key stops working on every process within a second").
   */
  readonly keysVersionMaxAgeMs?: number;
  /**
   * A single-record create in one round trip, for a backend where every statement is one to
   * a server (PostgreSQL; absent on SQLite, where a transaction costs none). Inserts `row`
   * (bound in `columns` order; `table` and `columns` quoted identifiers) as ONE autocommitted
   * statement that inserts nothing unless the catalog token (catalogToken) is still `token`,
   * and that is serializable with every Driver.transaction as one of them would be (the rules
   * the transaction path keeps by SERIALIZABLE keep here too). Resolves whether the row went
   * in. The search index must be kept by the statement itself (its triggers): no FulltextPort
   * hook runs around it. The caller (engine/store/sql/lone-create.ts) falls back to a
   * transaction when it resolves false or fails for any reason but a unique value or an
   * unreachable database.
   */
  readonly insertIfCatalog?: (table: string, columns: readonly string[], row: readonly Param[], token: unknown) => Promise<boolean>;
  /**
   * Rate-limit counts kept in the database, for a backend any number of processes share
   * (contract.md §8); absent when one process owns the data (SQLite: the server counts in memory).
   */
  readonly rateCounter?: RateCounter;
}
