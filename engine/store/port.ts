/**
 * The backend port (architecture.md "The backend port"): what the backend-neutral store
 * needs from a database. A backend is a folder under engine/store/ (sqlite/ today,
 * postgres/ next) holding a Driver, a Dialect and its codecs; nothing else in engine/
 * knows which database it runs on.
 */

/** A value a statement binds or a row column holds, as the driver sees it. */
export type Param = string | number | bigint | null;

/**
 * What a database failure means to the store, so no caller reads a vendor error code:
 * - `unique`: a unique constraint refused a write (the store names the offenders itself);
 * - `busy`: another connection holds the lock past the wait (SQLite SQLITE_BUSY, PostgreSQL
 *   serialization_failure / deadlock_detected: the write may be retried as a whole);
 * - `unwritable`: the database cannot be opened or written (permission, read-only);
 * - `other`: anything else (a bug, a corrupt database): reported as it is, masked in a 5xx.
 */
export type DbErrorKind = 'unique' | 'busy' | 'unwritable' | 'other';

/** A handle valid inside one transaction (or the driver itself for a lone statement). */
export interface Executor {
  all<R>(sql: string, params?: readonly Param[]): Promise<R[]>;
  get<R>(sql: string, params?: readonly Param[]): Promise<R | undefined>;
  run(sql: string, params?: readonly Param[]): Promise<{ changes: number }>;
  exec(sql: string): Promise<void>;
}

export interface Driver extends Executor {
  readonly dialect: Dialect;
  /**
   * One write transaction: all of `fn` lands or none of it. The invariants the store keeps
   * (records.ts, keys.ts, idempotency.ts, push.ts say which) rely on this: no other write
   * interleaves with `fn` in a way that changes what `fn` read. SQLite gives it by
   * serialising write transactions in the process and BEGIN IMMEDIATE across processes;
   * a PostgreSQL driver must give it with SERIALIZABLE + retry on `busy`, or the locks the
   * invariant comments name.
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  classify(err: unknown): DbErrorKind;
  close(): Promise<void>;
}

/** Sort direction plus where NULLs go, explicit so a keyset cursor is the same on every backend. */
export interface OrderKey {
  sql: string;
  desc: boolean;
}

/** The SQL that differs between databases; identifiers come quoted from validated names. */
export interface Dialect {
  /** The n-th (1-based) bound parameter: `?` in SQLite, `$n` in PostgreSQL. */
  placeholder(n: number): string;
  /** True when the JSON list in `column` has an element equal to any of `params`. */
  listContainsAny(column: string, params: readonly string[]): string;
  /** `a` equals `b`, NULL equal to NULL (SQLite `IS`, PostgreSQL `IS NOT DISTINCT FROM`). */
  nullSafeEqual(a: string, b: string): string;
  /** `a` differs from `b`, NULL distinct from any value. */
  nullSafeDistinct(a: string, b: string): string;
  /**
   * The ORDER BY term for a key with the store's NULL placement: NULLs first ascending and
   * last descending (SQLite's own order, which existing cursors encode).
   */
  orderTerm(key: OrderKey): string;
  /** Case-insensitive substring test (`contains` on text). */
  containsText(column: string, param: string): string;
  /** Prefix test (`startsWith`); `param` is bound twice (the dialect says how it uses it). */
  startsWith(column: string, param: string, again: string): string;
}
