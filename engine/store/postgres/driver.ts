import pg from 'pg';
import type { DbErrorKind, Driver, Executor, Param, TransactionOptions } from '../port.js';
import { postgresDialect } from './dialect.js';
import { PlaceholderCache } from './placeholders.js';
import { PreparedNames } from './prepared.js';
import { asJsonRows, chunks, pgMultiRowInsert } from './batch-insert.js';

/** How often a transaction is run again after a serialization failure or a deadlock. */
export const MAX_TRIES = 12;
/** Backoff before the n-th retry: up to BASE·2^(n-1) ms (capped), jittered. */
const BACKOFF_BASE_MS = 4;
const BACKOFF_CAP_MS = 250;

export interface PostgresDriverOptions {
  /** `postgres://user:password@host:port/database` */
  url: string;
  /** Connections in the main pool (per process; default 10). */
  max?: number;
  /** Connections in the pool of lone SERIALIZABLE statements (`serializable`; default: `max`). */
  serialMax?: number;
  /** Called when an idle connection fails (the database went away); the pool replaces it. */
  onIdleError?: (err: Error) => void;
  /**
   * A parameterless read every transaction starts with (the store's catalog token): sent in
   * the same round trip as BEGIN, its rows answer the transaction's first call of exactly
   * this statement. See `begin`.
   */
  opening?: string;
}

/** What BEGIN's round trip already read: the rows of `PostgresDriverOptions.opening`. */
interface Opened {
  sql: string;
  rows: unknown[];
}

/**
 * Rows as the SQLite driver gives them, so the shared SQL reads one shape on both backends:
 * int8 (bigint columns, count(*)) and numeric (sum, avg) as JS numbers rather than strings;
 * booleans as 1/0 (record booleans decode `Number(v) !== 0`, keyset cursors hold numbers);
 * json/jsonb as their text (codecs.ts parses it, as the SQLite codecs parse their JSON text).
 * Per pool, never pg's global type table (another pool in the process may want its own).
 */
const TYPE_PARSERS: Record<number, (text: string) => unknown> = {
  20: Number, // int8
  1700: Number, // numeric
  16: (t) => (t === 't' ? 1 : 0), // bool
  114: (t) => t, // json
  3802: (t) => t, // jsonb
};
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    TYPE_PARSERS[oid] ?? (pg.types.getTypeParser as (oid: number, format?: string) => (t: string) => unknown)(oid, format),
};

/**
 * The scale-out backend's driver over a node-postgres pool (issue 15, contract.md §8).
 *
 * Transactions run SERIALIZABLE: PostgreSQL then guarantees that the committed
 * transactions have the effect of some serial order, which is what the store's invariants
 * (engine/store/port.ts `transaction`) assume of SQLite's one writer at a time. Where two
 * transactions would break that, one fails with serialization_failure (40001) or
 * deadlock_detected (40P01), and the whole of `fn` runs again on a fresh snapshot after a
 * jittered backoff, up to MAX_TRIES times; after that the failure is classified `busy`.
 * So `fn` may run more than once: it must not have effects outside the database (the
 * store's callers drop caches after commit, not inside).
 *
 * Availability: the pool's 'error' listener takes idle connections that die (the database
 * restarted) so the process never crashes on them; a checked-out connection gets a listener
 * for as long as it is out. The next query opens a new connection, so the store recovers
 * by itself when the database comes back; until then calls fail with a kind of
 * `unavailable`, which the server answers as a masked 503.
 */
export class PostgresDriver implements Driver {
  readonly dialect = postgresDialect;
  readonly pool: pg.Pool;
  private readonly sqlText = new PlaceholderCache();
  private readonly prepared = new PreparedNames();
  /** Lone statements: each on whichever pooled connection is free, autocommitted. */
  private readonly direct: Executor;
  private readonly opening: string | undefined;

  /** Connections whose transactions default to SERIALIZABLE, for `serializable` (none open until used). */
  private readonly serialPool: pg.Pool;
  private readonly options: PostgresDriverOptions;

  constructor(options: PostgresDriverOptions) {
    this.options = options;
    this.opening = options.opening;
    this.pool = this.newPool(options.max ?? 10);
    this.serialPool = this.newSerialPool(options.serialMax ?? options.max ?? 10);
    this.direct = this.over(this.pool);
  }

  private newPool(max: number): pg.Pool {
    const { url, onIdleError } = this.options;
    const pool = new pg.Pool({ connectionString: url, max, types, connectionTimeoutMillis: 10_000, application_name: 'schemasync' });
    const onIdle = onIdleError ?? (() => {});
    pool.on('error', (err) => onIdle(err));
    return pool;
  }

  private sql(text: string): string {
    return this.sqlText.get(text);
  }

  private over(q: pg.Pool | pg.PoolClient, opened?: Opened): Executor {
    const run = async (sql: string, params: readonly Param[] = []) => ({ changes: (await q.query(this.prepared.query(this.sql(sql), params))).rowCount ?? 0 });
    // The opening's rows answer its first call, once: a second call reads again (the
    // transaction may have changed the row since).
    let pre = opened;
    const rows = async (sql: string, params: readonly Param[]): Promise<unknown[]> => {
      if (pre !== undefined && sql === pre.sql && params.length === 0) {
        const answer = pre.rows;
        pre = undefined;
        return answer;
      }
      return (await q.query(this.sql(sql), params as unknown[])).rows;
    };
    return {
      all: async <R>(sql: string, params: readonly Param[] = []) => (await rows(sql, params)) as R[],
      get: async <R>(sql: string, params: readonly Param[] = []) => (await rows(sql, params))[0] as R | undefined,
      run,
      exec: async (sql: string) => void (await q.query(sql)),
      runBatch: async (sql: string, rows: Iterable<readonly Param[]>) => {
        const insert = pgMultiRowInsert(sql);
        let changes = 0;
        if (insert === undefined) {
          // Not a plain INSERT … VALUES: one statement per row (in order, stopping at the first failure).
          for (const params of rows) changes += (await run(sql, params)).changes;
          return { changes };
        }
        // One statement per chunk: one round trip per chunk instead of per row.
        for (const chunk of chunks(rows, insert.perChunk)) {
          const json = asJsonRows(insert.columns, chunk);
          changes += (json === undefined ? await run(insert.statement(chunk.length), chunk.flat()) : await run(insert.fromJson, [json])).changes;
        }
        return { changes };
      },
    };
  }

  runBatch(sql: string, rows: Iterable<readonly Param[]>): Promise<{ changes: number }> {
    return this.direct.runBatch(sql, rows);
  }
  all<R>(sql: string, params?: readonly Param[]): Promise<R[]> {
    return this.direct.all<R>(sql, params);
  }
  get<R>(sql: string, params?: readonly Param[]): Promise<R | undefined> {
    return this.direct.get<R>(sql, params);
  }
  run(sql: string, params?: readonly Param[]): Promise<{ changes: number }> {
    return this.direct.run(sql, params);
  }
  exec(sql: string): Promise<void> {
    return this.direct.exec(sql);
  }

  async transaction<T>(fn: (tx: Executor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      // A retry waits for the writers of `waitFor` instead of racing them again (port.ts).
      const wait = attempt > 1 ? (options.waitFor?.() ?? []) : [];
      const lock = [...(options.oneAtATime === undefined ? [] : [`LOCK TABLE ${options.oneAtATime} IN SHARE ROW EXCLUSIVE MODE`]), ...(wait.length > 0 ? [`LOCK TABLE ${wait.join(', ')} IN SHARE MODE`] : [])];
      try {
        return await this.once('BEGIN ISOLATION LEVEL SERIALIZABLE', fn, lock);
      } catch (err) {
        if (attempt >= MAX_TRIES || !isRetryable(err)) throw err;
        await sleep(backoff(attempt));
      }
    }
  }

  /**
   * A READ ONLY REPEATABLE READ transaction: every read of `fn` sees the one snapshot taken at
   * its first statement (a search page and its total agree). Read-only transactions never
   * fail serialization at this level, so it is not retried.
   */
  snapshot<T>(fn: (ex: Executor) => Promise<T>): Promise<T> {
    return this.once('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn);
  }

  /** One try: BEGIN … COMMIT on one pooled connection, ROLLBACK on failure. */
  private once<T>(begin: string, fn: (tx: Executor) => Promise<T>, lock: readonly string[] = []): Promise<T> {
    return checkedOut(this.pool, async (client, connection) => {
      const opened = await this.begin(client, begin, lock);
      try {
        const out = await fn(this.over(client, opened));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        if (connection.broken === undefined) {
          try {
            await client.query('ROLLBACK');
          } catch (rollbackErr) {
            connection.broken = rollbackErr as Error;
          }
        }
        throw err;
      }
    });
  }

  /**
   * One statement as a SERIALIZABLE transaction of its own, in one round trip: autocommitted
   * on a connection whose transactions default to SERIALIZABLE (set once per connection, when
   * it opens). So it takes part in PostgreSQL's serializable snapshot isolation with every
   * `transaction` (a cycle of read/write dependencies with one of them fails one side with a
   * serialization failure, classified `busy`), where a lone statement on the main pool
   * (READ COMMITTED, the database's default) would not. Its own pool: the main pool's lone
   * statements (the rate counter's upsert on one hot row) must stay READ COMMITTED, where
   * concurrent upserts wait for each other instead of failing. Not retried here: the caller
   * decides (engine/store/sql/lone-create.ts falls back to a full transaction).
   */
  async serializable(sql: string, params: readonly Param[]): Promise<{ changes: number }> {
    return checkedOut(this.serialPool, async (client) => ({ changes: (await client.query(this.prepared.query(this.sql(sql), params))).rowCount ?? 0 }));
  }

  private newSerialPool(max: number): pg.Pool {
    const pool = this.newPool(max);
    // Queued before any statement of whoever checks the new connection out (node-postgres runs
    // a client's queries in order). If it failed on a live connection, the statement would run
    // at the database's default level: `serializable`'s callers check the level in the
    // statement itself (`current_setting('transaction_isolation')`) rather than trust this.
    pool.on('connect', (client) => void client.query("SET default_transaction_isolation TO 'serializable'").catch(() => undefined));
    return pool;
  }

  /**
   * BEGIN, and the opening read in the same round trip (one simple-protocol query of two
   * statements: the transaction stays open after it, and its snapshot is taken by the read,
   * so the catalog token is read inside the very transaction that does the work, as
   * engine/store/sql/catalog.ts requires). On a database not set up yet (the setup
   * transaction on first start creates `_ss_meta`) the read fails with undefined_table, as
   * a LOCK does when a table it names is missing (a record table dropped meanwhile): that one
   * transaction begins again without either.
   */
  private async begin(client: pg.PoolClient, begin: string, lock: readonly string[]): Promise<Opened | undefined> {
    const opening = this.opening;
    // LOCK takes no snapshot: the opening read after it takes the transaction's, so the
    // transaction sees every write it waited for (port.ts TransactionOptions.waitFor).
    // `lock`: whole LOCK statements, in the order every writer takes them (transaction()).
    const parts = [begin, ...lock, ...(opening === undefined ? [] : [opening])];
    if (parts.length === 1) {
      await client.query(begin);
      return undefined;
    }
    try {
      const results = (await client.query(parts.join('; '))) as unknown as pg.QueryResult[];
      return opening === undefined ? undefined : { sql: opening, rows: results[parts.length - 1]?.rows ?? [] };
    } catch (err) {
      // BEGIN ran and the lock or the read failed: the connection is inside an aborted transaction, which
      // must end here (`once` rolls back only what `fn` began). A failing ROLLBACK means the
      // connection is gone: the read's own error is the one to report.
      try {
        await client.query('ROLLBACK');
      } catch {
        throw err;
      }
      if (sqlState(err) !== '42P01') throw err;
      await client.query(begin);
      return undefined;
    }
  }

  classify(err: unknown): DbErrorKind {
    return classifyPostgresError(err);
  }

  private closing: Promise<void> | undefined;
  /** Ends the pool once; a second close waits for the first (a store may be closed twice). */
  close(): Promise<void> {
    this.closing ??= Promise.all([this.pool.end(), this.serialPool.end()]).then(() => undefined);
    return this.closing;
  }
}

/** Whether a checked-out connection must be destroyed instead of going back to the pool. */
interface Connection {
  broken?: Error | undefined;
}

/**
 * `fn` on one pooled connection, released after it: destroyed when it broke (it emitted
 * 'error', or `fn` failed with the database unreachable, or `fn` marked it), else returned.
 * pg's own `pool.query` would destroy the connection after any failed statement (a unique
 * violation included), costing a new connection for an ordinary refusal.
 */
async function checkedOut<T>(pool: pg.Pool, fn: (client: pg.PoolClient, connection: Connection) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const connection: Connection = {};
  // A connection that dies while checked out emits 'error'; unheard, it would crash the process.
  const onError = (err: Error): void => void (connection.broken = err);
  client.on('error', onError);
  try {
    return await fn(client, connection);
  } catch (err) {
    connection.broken ??= classifyPostgresError(err) === 'unavailable' ? (err as Error) : undefined;
    throw err;
  } finally {
    client.off('error', onError);
    client.release(connection.broken);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Full jitter (AWS "Exponential Backoff And Jitter"): contenders spread out instead of colliding again. */
function backoff(attempt: number): number {
  return Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
}

/**
 * DDL reads the current catalog, not the transaction's snapshot: a schema write that planned
 * from a snapshot older than another one's committed DDL finds a column or table gone, or
 * already there (a concurrent CREATE TABLE fails on the catalog's own unique index). That is
 * the same conflict a serialization failure reports, so it is retried the same way, and the
 * second push plans again on the first's result (two CI jobs pushing one reviewed plan: one
 * applies, the other is refused 409, never 500). A real bug of that kind still surfaces after
 * the last try.
 */
const DDL_RACES = new Set(['42703', '42P01', '42P07', '42701', '42710']);

const isRetryable = (err: unknown): boolean => {
  const code = sqlState(err);
  if (code === '40001' || code === '40P01') return true;
  if (code !== undefined && DDL_RACES.has(code)) return true;
  const constraint = (err as { constraint?: unknown }).constraint;
  return code === '23505' && typeof constraint === 'string' && constraint.startsWith('pg_');
};

const sqlState = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** Node's socket failures and pg's own (no SQLSTATE) that mean the server cannot be reached. */
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ENETUNREACH']);
const PG_DOWN = /Connection terminated|terminating connection|Client has encountered a connection error|timeout exceeded when trying to connect|Connection ended|not queryable/i;

/**
 * SQLSTATEs (PostgreSQL "Appendix A. Error Codes") read here and nowhere else; the rest of
 * the engine asks `classify` (engine/store/port.ts DbErrorKind).
 */
export function classifyPostgresError(err: unknown): DbErrorKind {
  const code = sqlState(err);
  if (code === '23505') return 'unique';
  // serialization_failure, deadlock_detected (retried by `transaction` first), lock_not_available
  if (code === '40001' || code === '40P01' || code === '55P03') return 'busy';
  if (code !== undefined && NETWORK.has(code)) return 'unavailable';
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
    // connection_exception, invalid_authorization, invalid_catalog_name (no such database),
    // admin/crash shutdown, cannot_connect_now, too_many_connections
    if (/^(08|28)/.test(code) || ['3D000', '57P01', '57P02', '57P03', '53300'].includes(code)) return 'unavailable';
    // insufficient_privilege, read_only_sql_transaction, disk_full
    if (['42501', '25006', '53100'].includes(code)) return 'unwritable';
    return 'other';
  }
  const message = (err as { message?: unknown } | null)?.message;
  if (typeof message === 'string' && PG_DOWN.test(message)) return 'unavailable';
  return 'other';
}
