import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { DEFAULT_CONNECTIONS, MAX_CONNECTIONS, MIN_CONNECTIONS, isConnectionCount, maskDatabaseUrl, parseDatabaseUrl, startLocalServer, type CreatedKeyReason, type LocalServer, type LocalServerOptions } from '../engine/server/local.js';
import { parseCorsOrigins, type CorsOrigins } from '../engine/server/cors.js';
import { CliError } from './errors.js';

/**
 * What `serve` and `dev` share around engine/server/local.ts: start-up failures as one
 * line, the stop signals, and the line saying why a key was created on a later start.
 */

/** startLocalServer, with its listen failures said in the CLI's words. */
export async function startServer(options: LocalServerOptions & { host: string; port: number }): Promise<LocalServer> {
  try {
    return await startLocalServer(options);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const { host, port } = options;
    if (e.code === 'EADDRINUSE') throw new CliError(`port ${port} on ${host} is already in use`, { hint: 'Pick another with --port.' });
    // Only the listen call's EACCES is about the port; a data folder's is a DataFolderError.
    if (e.code === 'EACCES' && e.syscall === 'listen') throw new CliError(`not allowed to listen on ${host}:${port}`);
    throw err;
  }
}

/** Why a key was created on a start that was not the first, said with credentials.json's path. */
const KEY_REASONS: Record<Exclude<CreatedKeyReason, 'first-start'>, (credentials: string) => string> = {
  'credentials-missing': (c) => `${c} was missing, so a new owner key was created (the keys created before still work)`,
  'credentials-unreadable': (c) => `${c} could not be read, so a new owner key was created and written over it (the keys created before still work)`,
  'credentials-revoked': (c) => `the key in ${c} no longer works (revoked), so a new owner key was created and written over it`,
};

/** Why the owner key printed on this start was created, when it was not the first start. */
export function keyReasonLine(server: LocalServer, credentialsShown: string): string | undefined {
  const reason = server.createdKeyReason;
  return reason === null || reason === 'first-start' ? undefined : KEY_REASONS[reason](credentialsShown);
}

/**
 * SIGINT/SIGTERM for a process hosting a server. Installed before the server listens, so a
 * signal during start-up still ends in a clean stop; kept installed until dispose(), so a
 * second signal during the stop does not kill the process with the database open.
 */
export interface StopSignals {
  /** Resolves with the first signal: stop gracefully. */
  readonly first: Promise<NodeJS.Signals>;
  /** Resolves with the second: stop now. */
  readonly second: Promise<NodeJS.Signals>;
  dispose(): void;
}

export function catchStopSignals(): StopSignals {
  let resolveFirst!: (s: NodeJS.Signals) => void;
  let resolveSecond!: (s: NodeJS.Signals) => void;
  const first = new Promise<NodeJS.Signals>((r) => (resolveFirst = r));
  const second = new Promise<NodeJS.Signals>((r) => (resolveSecond = r));
  let seen = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    seen += 1;
    if (seen === 1) resolveFirst(signal);
    else resolveSecond(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    first,
    second,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/**
 * Stops the server: in-flight requests get the grace period (LocalServer.close), a second
 * signal meanwhile (or already received) closes their connections at once. Either way the
 * database is closed before this resolves.
 */
export async function stopServer(server: LocalServer, signals: StopSignals, onForce: (signal: NodeJS.Signals) => void): Promise<void> {
  let done = false;
  void signals.second.then((signal) => {
    if (done) return;
    onForce(signal);
    void server.closeNow();
  });
  try {
    await server.close();
  } finally {
    done = true;
    signals.dispose();
  }
}

/**
 * Issue 13: a data folder inside a git work tree that git does not ignore is one `git add .`
 * away from committing the owner key (credentials.json) and the database. Asked of git
 * itself (`git check-ignore`), so every .gitignore, exclude file and global rule counts; no
 * git, or a folder outside any work tree (exit 128), is no warning.
 */
export function unignoredDataWarning(credentialsPath: string, shownDataDir: string): string | undefined {
  const r = spawnSync('git', ['check-ignore', '-q', credentialsPath], { cwd: dirname(credentialsPath), stdio: 'ignore' });
  if (r.error || r.status !== 1) return undefined;
  return `${shownDataDir} holds the database and the owner key (credentials.json) and sits in a git work tree without being ignored: add it to .gitignore so it is never committed`;
}

/** The flags `serve` and `dev` share (contract.md §4): where the server listens and what it serves. */
export interface ServerOptions {
  host: string;
  port: string;
  data: string;
  rateLimit: boolean;
  mcpWrites?: boolean;
  studio: boolean;
  /** --cors: `*` or origins, comma-separated */
  cors?: string;
  /** --database: a postgres:// URL (contract.md §8) */
  database?: string;
  /** --database-connections: the most PostgreSQL connections this process opens */
  databaseConnections?: string;
  quiet?: boolean;
}

/** `--port` of serve and dev: 0 asks the system for a free port. */
export function portOf(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CliError(`--port must be a whole number from 0 to 65535, got "${value}"`);
  }
  return port;
}

/** `--cors <origin,...>` of serve and dev (contract.md §3): undefined keeps the default (this machine's pages). */
export function corsOrigins(value: string | undefined): CorsOrigins | undefined {
  if (value === undefined) return undefined;
  const parsed = parseCorsOrigins(value);
  if ('problem' in parsed) throw new CliError(`--cors: ${parsed.problem}`, { hint: "Pass --cors '*' to allow any origin." });
  return parsed.origins;
}

/** A setting of serve and dev and what gave it: the flag wins over the variable; an empty variable counts as unset. */
const flagOrEnv = (flag: string | undefined, flagName: string, env: NodeJS.ProcessEnv, envName: string): [string | undefined, string] =>
  flag !== undefined ? [flag, flagName] : [env[envName] || undefined, envName];

/**
 * The database of serve and dev (contract.md §8): `--database`, else env
 * SCHEMASYNC_DATABASE_URL (the flag wins; an empty variable counts as unset); undefined
 * keeps the SQLite file under --data. A value that is not a postgres:// URL is refused
 * before anything starts, named without its password.
 */
export function databaseUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const [value, from] = flagOrEnv(flag, '--database', env, 'SCHEMASYNC_DATABASE_URL');
  if (value === undefined) return undefined;
  const parsed = parseDatabaseUrl(value);
  if ('problem' in parsed) {
    throw new CliError(`${from} ${parsed.problem}`, { hint: 'Pass a URL such as postgres://user:password@host:5432/database, or leave it out to use SQLite under --data.' });
  }
  return value;
}

/**
 * `--database-connections <n>` of serve and dev, else env SCHEMASYNC_DATABASE_CONNECTIONS (the
 * flag wins; an empty variable counts as unset): the most PostgreSQL connections this process
 * opens (engine/store/postgres/connections.ts). The flag without a PostgreSQL database is
 * refused (the SQLite file has one connection); the variable is ignored then, as a setting
 * shared with other commands may be.
 */
export function databaseConnections(flag: string | undefined, env: NodeJS.ProcessEnv, database: string | undefined): number | undefined {
  const [value, from] = flagOrEnv(flag, '--database-connections', env, 'SCHEMASYNC_DATABASE_CONNECTIONS');
  if (value === undefined) return undefined;
  if (database === undefined) {
    if (flag === undefined) return undefined;
    throw new CliError('--database-connections applies to a PostgreSQL database only', { hint: 'Pass --database postgres://… as well, or leave --database-connections out (SQLite uses one connection).' });
  }
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!isConnectionCount(n)) {
    throw new CliError(`${from} must be a whole number from ${MIN_CONNECTIONS} to ${MAX_CONNECTIONS}, got "${value}"`, {
      hint: `Each process keeps two pools (one connection each at least); the default is ${DEFAULT_CONNECTIONS}. Processes × connections must fit the database's max_connections.`,
    });
  }
  return n;
}

/** The line serve and dev print for a PostgreSQL database: where (never the password), and how many connections at most. */
export function databaseLine(database: string | undefined, connections: number | undefined): string | undefined {
  return database === undefined ? undefined : `database: ${maskDatabaseUrl(database)} (up to ${connections ?? DEFAULT_CONNECTIONS} connections)`;
}
