import type { Statement } from 'better-sqlite3';
import type { DbErrorKind, Driver, Executor, Param } from '../port.js';
import { resolve } from 'node:path';
import { openDatabase, type Db } from './database.js';
import { sqliteDialect } from './dialect.js';

/** Prepared record statements kept (LRU); see stmt(). */
export const STATEMENT_CACHE_SIZE = 200;
/** Statements binding more values than this are not kept in the cache (see prepare). */
const CACHED_PARAMS = 66;

/**
 * The embedded backend's driver over one better-sqlite3 connection.
 *
 * better-sqlite3 is synchronous and one connection serves the whole process, so a
 * transaction left open across an `await` would take in whatever else runs meanwhile
 * (another request's write would land in it, its reads would see uncommitted rows).
 * Hence one queue per connection: every store call runs in turn (`serial`), and a
 * `transaction` holds the queue from BEGIN IMMEDIATE to COMMIT/ROLLBACK, however many
 * awaits its body takes. Across processes on one data folder BEGIN IMMEDIATE takes the
 * write lock up front and busy_timeout makes the second writer wait (database.ts).
 * The queue costs one promise per store call, never one per row.
 */
export class SqliteDriver implements Driver {
  readonly dialect = sqliteDialect;
  readonly db: Db;
  private statements = new Map<string, Statement>();
  private readonly line: Line;

  constructor(path: string) {
    this.db = openDatabase(path);
    this.line = lineOf(path);
  }

  /**
   * Run a synchronous `fn` after every call queued before it; calls never overlap. With
   * nothing queued (no transaction holds the connection across an await) it runs at once:
   * a synchronous call cannot interleave with anything, and the hot paths (a single create,
   * a search) pay no extra turn of the event loop.
   */
  serial<T>(fn: () => T): Promise<T> {
    if (this.line.pending === 0) {
      try {
        return Promise.resolve(fn());
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return this.enqueue(fn);
  }

  private enqueue<T>(fn: () => T | Promise<T>): Promise<T> {
    const line = this.line;
    // Nothing queued: start at once (no turn of the event loop on the hot paths); what comes
    // next still waits for this, as `queue` follows it.
    const run = line.pending === 0 ? this.start(fn) : line.queue.then(fn, fn);
    line.pending++;
    const done = (): void => void line.pending--;
    line.queue = run.then(done, done);
    return run;
  }

  private start<T>(fn: () => T | Promise<T>): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    return this.enqueue(async () => {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const out = await fn(this.direct);
        this.db.exec('COMMIT');
        return out;
      } catch (err) {
        // A failed COMMIT or a statement error may have ended the transaction already.
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  /** The executor a transaction body gets: runs at once (the body holds the queue). */
  private readonly direct: Executor = {
    all: async <R>(sql: string, params: readonly Param[] = []) => this.prepare(sql, params.length).all(...params) as R[],
    get: async <R>(sql: string, params: readonly Param[] = []) => this.prepare(sql, params.length).get(...params) as R | undefined,
    run: async (sql: string, params: readonly Param[] = []) => ({ changes: this.prepare(sql, params.length).run(...params).changes }),
    // DDL re-reads the schema: statements prepared before it are prepared again.
    exec: async (sql: string) => {
      this.db.exec(sql);
      this.clearStatements();
    },
    runBatch: async (sql: string, rows: Iterable<readonly Param[]>) => {
      const stmt = this.prepare(sql, 0);
      let changes = 0;
      // Spread, not the array: better-sqlite3 binds positional arguments ~10% faster.
      for (const params of rows) changes += stmt.run(...params).changes;
      return { changes };
    },
  };

  snapshot<T>(fn: (ex: Executor) => Promise<T>): Promise<T> {
    // The queue holds the one connection for the whole of `fn`: no write lands in between.
    return this.enqueue(() => fn(this.direct));
  }

  all<R>(sql: string, params: readonly Param[] = []): Promise<R[]> {
    return this.enqueue(() => this.direct.all<R>(sql, params));
  }
  get<R>(sql: string, params: readonly Param[] = []): Promise<R | undefined> {
    return this.enqueue(() => this.direct.get<R>(sql, params));
  }
  run(sql: string, params: readonly Param[] = []): Promise<{ changes: number }> {
    return this.enqueue(() => this.direct.run(sql, params));
  }
  exec(sql: string): Promise<void> {
    return this.enqueue(() => this.direct.exec(sql));
  }
  runBatch(sql: string, rows: Iterable<readonly Param[]>): Promise<{ changes: number }> {
    return this.enqueue(() => this.direct.runBatch(sql, rows));
  }

  classify(err: unknown): DbErrorKind {
    return classifySqliteError(err);
  }

  async close(): Promise<void> {
    await this.enqueue(() => {
      this.statements.clear();
      if (this.db.open) this.db.close();
    });
  }

  /**
   * A statement, LRU-cached by its text. A statement binding many values (a search filter
   * with long `in` lists) is rarely sent twice in the same shape and is large: prepared
   * for this call only, so the cache holds the common shapes.
   */
  private prepare(sql: string, params: number): Statement {
    return this.stmt(sql, params > CACHED_PARAMS ? { cache: false } : {});
  }

  /**
   * Statements are cached by SQL text and dropped after any DDL (the cache goes with the
   * schema). The cache is a bounded LRU: search SQL varies with the filter's shape (an `in`
   * list of n values is its own text), so an unbounded map grew without end under varied
   * searches. The record paths (insert, get, update of one shape) stay hot and stay cached.
   */
  stmt(sql: string, options: { cache?: boolean } = {}): Statement {
    const statements = this.statements;
    let s = statements.get(sql);
    if (s) {
      // Most recently used last: Map keeps insertion order, so re-insert on a hit.
      statements.delete(sql);
      statements.set(sql, s);
      return s;
    }
    s = this.db.prepare(sql);
    if (options.cache === false) return s;
    statements.set(sql, s);
    if (statements.size > STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
    return s;
  }

  /** After DDL: record statements are prepared again against the new schema. */
  clearStatements(): void {
    this.statements.clear();
  }

  statementCacheSize(): number {
    return this.statements.size;
  }
}

/**
 * The queue of one database file in this process, shared by every connection to it. A
 * second connection in the same process (a test's second store, a CLI command run inside a
 * server's process) must wait for a transaction of the first by awaiting, not in SQLite's
 * busy wait: that wait blocks the thread, so the first transaction, paused at an await,
 * could never reach its COMMIT (a deadlock until busy_timeout, then "database is locked").
 * Other processes are kept out by the file lock (BEGIN IMMEDIATE, busy_timeout).
 */
interface Line {
  queue: Promise<unknown>;
  /** Calls queued or running (a transaction counts until it ends). */
  pending: number;
}

const lines = new Map<string, Line>();

function lineOf(path: string): Line {
  const key = path === ':memory:' ? `:memory:${lines.size}` : resolve(path);
  let line = lines.get(key);
  if (!line) {
    line = { queue: Promise.resolve(), pending: 0 };
    lines.set(key, line);
  }
  return line;
}

/**
 * better-sqlite3's SqliteError codes, read here and nowhere else: the rest of the engine
 * asks `classify` (engine/store/port.ts DbErrorKind).
 */
export function classifySqliteError(err: unknown): DbErrorKind {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return 'other';
  if (code === 'SQLITE_CONSTRAINT_UNIQUE') return 'unique';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
  // "unable to open database file", "attempt to write a readonly database"
  if (/^SQLITE_(CANTOPEN|READONLY|PERM|AUTH)/.test(code)) return 'unwritable';
  return 'other';
}
