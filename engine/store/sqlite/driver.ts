import type { Statement } from 'better-sqlite3';
import type { DbErrorKind, Driver, Executor, Param, TransactionOptions } from '../port.js';
import { Checkpointer, type CheckpointTiming } from './checkpointer.js';
import { openDatabase, type Db } from './database.js';
import { sqliteDialect } from './dialect.js';
import { GroupRunner } from './group.js';
import { join, lineOf, releaseLine, type Group, type Line } from './line.js';
import { runRows } from './batch.js';

/** Prepared record statements kept (LRU); see stmt(). */
export const STATEMENT_CACHE_SIZE = 200;
/** Statements binding more values than this are not kept in the cache (see prepare). */
const CACHED_PARAMS = 66;
/** At most this many writes share one COMMIT (see transaction). */
export const GROUP_LIMIT = 64;

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
  /** Transaction control, prepared once (not parsed again for every write). */
  private readonly sql: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', Statement>;
  /** COMMITs run on this connection (benchmarks and tests read how many writes one carried). */
  commits = 0;
  /** How a group of writes runs (group.ts). */
  private readonly groups: GroupRunner;
  /** WAL checkpoints on a worker thread once this connection writes a lot (checkpointer.ts). */
  readonly checkpointer: Checkpointer;
  /** Told of every COMMIT of a store write (the backend arms its search-index catch-up here: fulltext-pending.ts). */
  afterCommit: (() => void) | undefined;

  /** `checkpoints`: when the log is copied back (tests; the store uses checkpointer.ts's). */
  constructor(path: string, options: { checkpoints?: CheckpointTiming } = {}) {
    this.db = openDatabase(path);
    this.checkpointer = new Checkpointer(this.db, path, options.checkpoints);
    this.line = lineOf(path);
    const p = (sql: string): Statement => this.db.prepare(sql);
    this.sql = {
      begin: p('BEGIN IMMEDIATE'),
      commit: p('COMMIT'),
      rollback: p('ROLLBACK'),
      // One name serves every member: a group's savepoints are never nested in each other.
      savepoint: p('SAVEPOINT ss_group'),
      release: p('RELEASE SAVEPOINT ss_group'),
      rollbackTo: p('ROLLBACK TO SAVEPOINT ss_group'),
    };
    // Class fields (`direct`) are set before the constructor's body runs.
    this.groups = new GroupRunner({ db: this.db, sql: this.sql, line: this.line, direct: this.direct, committed: () => this.committed() });
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

  /**
   * A write transaction. Group commit: writes that opt in (`group`) and wait at the same
   * time run in ONE transaction (group.ts: one after the other, each in a savepoint only when
   * one of them failed), so a transaction's fixed cost here (BEGIN/COMMIT, the commit's WAL
   * frames, FTS5's segment flush at commit) is paid once per group (up to GROUP_LIMIT writes).
   *
   * When a group forms. A grouped write that finds a grouped write of this connection still
   * queued joins it. That alone rarely happens: better-sqlite3 is synchronous, so a write
   * that starts at once runs to its COMMIT within the microtasks of the I/O callback that
   * asked for it, and the next request's callback finds the queue idle. So under load a
   * grouped write that starts at once keeps its transaction open until the end of this turn
   * of the event loop (`collecting`), and grouped writes asked for meanwhile join it, as do
   * those queued behind it once it ends (reads are queued behind it, so the requests of one
   * turn meet in the next group). "Under load" means another COMMIT already ran in this turn;
   * a lone write, or the first of a turn, runs at once exactly as before (no added latency),
   * and a turn's wait that nobody used (a caller looping over single writes) turns collecting
   * off for a moment (group.ts QUIET_MS).
   *
   * Why this is as good as running the members one after the other: they DO run one after
   * the other, on this one connection, inside one transaction, so each sees every write of the
   * members before it exactly as it would after their COMMITs — an if-match compares with
   * the version the previous member left (records.ts writeUpdates), a unique or relation
   * check sees the previous member's rows (record-rules.ts), an idempotency answer remembered
   * by one is recalled by the next. Nothing else runs on the connection meanwhile (the group
   * holds the queue). Joining lets a write overtake calls queued after the group; all of them
   * were waiting at once (none had answered its caller), so any order among them is one a
   * serial run could give, and a call made after another answered is queued after it. Every
   * member settles only after the group's COMMIT: nobody is told "written" before it is.
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const line = this.line;
    const open = line.open;
    if (options.group && open?.driver === this && open.members.length < GROUP_LIMIT) return join<T>(open, fn);
    const group: Group = { driver: this, members: [], collecting: false };
    const out = join<T>(group, fn);
    if (options.group) {
      if (line.pending > 0) line.open = group;
      else if (line.committedThisTurn && performance.now() >= line.quietUntil) {
        group.collecting = true;
        line.open = group;
      }
    }
    void this.enqueue(() => {
      if (line.open === group && !group.collecting) line.open = null;
      return this.groups.run(group);
    });
    return out;
  }

  /** Marks this turn of the event loop as one that has committed (see transaction). */
  private committed(): void {
    this.commits++;
    this.checkpointer.afterCommit();
    this.afterCommit?.();
    const line = this.line;
    if (line.committedThisTurn) return;
    line.committedThisTurn = true;
    setImmediate(() => {
      line.committedThisTurn = false;
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
    runBatch: async (sql: string, rows: Iterable<readonly Param[]>) => runRows((text) => this.stmt(text), sql, rows),
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
    await this.checkpointer.stop();
    await this.enqueue(() => {
      this.statements.clear();
      if (this.db.open) {
        this.db.close();
        releaseLine(this.line);
      }
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
