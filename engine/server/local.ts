import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { storeErrorKind } from '../store/open.js';
import { openStoreAt, type StoreLocation } from '../store/open.js';
import type { Store } from '../store/types.js';
import { createServer } from './app.js';
import type { CorsOrigins } from './cors.js';

/** The database URL's rule and masked form, for the commands that take `--database`. */
export { DEFAULT_CONNECTIONS, MAX_CONNECTIONS, MIN_CONNECTIONS, isConnectionCount, maskDatabaseUrl, parseDatabaseUrl } from '../store/open.js';

/**
 * The reusable part of `schemasync serve` (and `schemasync dev`): open the store in a data
 * folder, start the app, and on first start create the owner key and write
 * `<data>/credentials.json` (contract.md §4: `{ baseUrl, apiKey }`, mode 0600). A folder
 * whose keys exist but whose credentials.json is gone, unreadable or holds a revoked key gets
 * a fresh owner key the same way (the database holds only hashes, so no saved key can be
 * recovered).
 */
export interface LocalServerOptions {
  dataDir: string;
  host?: string;
  port?: number;
  rateLimit?: boolean;
  /** `--mcp-writes`: write tools may be offered over POST /v1/mcp (contract.md §6). */
  mcpWrites?: boolean;
  /** Origins whose pages may call the server (engine/server/cors.ts); default: this machine's. */
  cors?: CorsOrigins;
  logger?: FastifyServerOptions['logger'];
  /**
   * `--database` / SCHEMASYNC_DATABASE_URL (contract.md §8): a postgres:// URL; absent, the
   * SQLite file under dataDir. File bytes and credentials.json stay under dataDir either way.
   */
  database?: string | undefined;
  /** `--database-connections`: with `database`, the most connections this process opens (default 20). */
  databaseConnections?: number | undefined;
  /** How to open the database (default: engine/store/open.ts, which picks the backend); tests inject one. */
  openStore?: (location: StoreLocation) => Store | Promise<Store>;
  /**
   * How long close() lets in-flight requests finish before it cuts their connections
   * (default DEFAULT_SHUTDOWN_GRACE_MS).
   */
  shutdownGraceMs?: number;
  /** Serve Studio at /_/ (contract.md §9); on unless false (`--no-studio`). */
  studio?: boolean;
}

export interface Credentials {
  baseUrl: string;
  apiKey: string;
}

export interface LocalServer {
  app: FastifyInstance;
  /** Studio's address (`http://host:port/_/`), or null with `--no-studio`. */
  studioUrl: string | null;
  store: Store;
  baseUrl: string;
  dataDir: string;
  credentialsPath: string;
  /** The owner key created on this start, to print once; else null. */
  createdKey: string | null;
  /**
   * Why createdKey was created: the folder had no key yet, or it had keys but its
   * credentials.json was missing, unreadable or held a revoked key (then the old keys are left as they are).
   */
  createdKeyReason: CreatedKeyReason | null;
  /**
   * Stops accepting, lets in-flight requests finish for the grace period, then closes the
   * connections still open, then the database. Called again, the same promise.
   */
  close(): Promise<void>;
  /** close(), with the grace period cut short: open connections are closed at once. */
  closeNow(): Promise<void>;
}

export type CreatedKeyReason = 'first-start' | 'credentials-missing' | 'credentials-unreadable' | 'credentials-revoked';

export const DATABASE_FILE = 'schemasync.db';
export const CREDENTIALS_FILE = 'credentials.json';
/** File bytes (contract.md §3 "Files"), under the data folder on both backends. */
export const FILES_DIR = 'files';
/** How long a stop waits for in-flight requests (a stalled client would else hold it for the 5-minute request timeout). */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** The data folder (or the database in it) cannot be created or written. */
export class DataFolderError extends Error {
  readonly dataDir: string;
  constructor(dataDir: string, reason: string, cause: unknown) {
    super(`data folder ${dataDir} is not writable (${reason})`, { cause });
    this.name = 'DataFolderError';
    this.dataDir = dataDir;
  }
}


export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const dataDir = resolve(options.dataDir);
  const openStore = options.openStore ?? openStoreAt;
  let store: Store;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    store = await openStore({ path: join(dataDir, DATABASE_FILE), filesDir: join(dataDir, FILES_DIR), database: options.database, connections: options.databaseConnections });
  } catch (err) {
    throw asDataFolderError(dataDir, err, options.database === undefined);
  }
  let app: FastifyInstance;
  try {
    app = await createServer({
      store,
      logger: options.logger ?? false,
      rateLimit: options.rateLimit ?? true,
      mcpWrites: options.mcpWrites === true,
      studio: options.studio === false ? false : {},
      ...(options.cors ? { cors: options.cors } : {}),
    });
    await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 4400 });
  } catch (err) {
    await store.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 4400);
  const baseUrl = `http://${urlHost(options.host ?? '127.0.0.1')}:${port}/v1`;
  const credentialsPath = join(dataDir, CREDENTIALS_FILE);

  let createdKey: string | null = null;
  let createdKeyReason: CreatedKeyReason | null = null;
  try {
    const hasKeys = (await store.countActiveKeys()) > 0;
    const read = hasKeys ? readCredentials(dataDir) : null;
    // A saved key that was revoked (or belongs to another data folder) opens nothing either.
    const revoked = read !== null && (await store.authenticate(read.apiKey)) === null;
    const saved = revoked ? null : read;
    if (saved) {
      // Keep the saved key but point it at where this server now listens, so other commands find it.
      if (saved.baseUrl !== baseUrl) writeCredentials(credentialsPath, { ...saved, baseUrl });
    } else {
      // First start, or keys exist but credentials.json is gone (or unreadable): the database
      // holds only hashes, so without a fresh owner key nobody could use this server.
      createdKeyReason = !hasKeys ? 'first-start' : revoked ? 'credentials-revoked' : existsSync(credentialsPath) ? 'credentials-unreadable' : 'credentials-missing';
      const { secret } = await store.createKey({ name: 'owner', role: 'owner', scopes: null });
      createdKey = secret;
      writeCredentials(credentialsPath, { baseUrl, apiKey: secret });
    }
  } catch (err) {
    await app.close().finally(() => store.close());
    throw asDataFolderError(dataDir, err, options.database === undefined);
  }

  // Stopping: Fastify stops accepting and waits for in-flight requests; when the grace
  // period ends (or closeNow is called) the connections still open are closed, so a
  // stalled client cannot hold the stop for the 5-minute request timeout.
  const graceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  let cut = false;
  const cutConnections = () => {
    cut = true;
    app.server.closeAllConnections();
  };
  // A connection accepted after the cut (before Fastify's server.close ran) goes too.
  app.server.on('connection', (socket: Socket) => {
    if (cut) socket.destroy();
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const timer = setTimeout(cutConnections, graceMs);
      try {
        await app.close();
      } finally {
        clearTimeout(timer);
        await store.close();
      }
    })();
    return closing;
  };
  return {
    app,
    studioUrl: options.studio === false ? null : baseUrl.replace(/\/v1$/, '/_/'),
    store,
    baseUrl,
    dataDir,
    credentialsPath,
    createdKey,
    createdKeyReason,
    close,
    closeNow() {
      const done = close();
      cutConnections();
      return done;
    },
  };
}

/**
 * Why the data folder could not be used, when the failure is about writing there (a
 * permission, a read-only file system or database, a file where a folder should be);
 * undefined for anything else (a corrupt or newer database), which is reported as it is.
 */
function notWritableReason(err: unknown, onSqlite: boolean): string | undefined {
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e?.code !== 'string' || typeof e.message !== 'string') return undefined;
  if (['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'EISDIR'].includes(e.code)) return e.message;
  // The store's backend says whether its own error is about writing (engine/store/port.ts);
  // only the SQLite file lives in the data folder (a PostgreSQL refusal is reported as it is).
  if (onSqlite && storeErrorKind(err) === 'unwritable') return `${DATABASE_FILE}: ${e.message}`;
  return undefined;
}

/** `err` as a DataFolderError when it is about writing the data folder, else as it is. */
function asDataFolderError(dataDir: string, err: unknown, onSqlite: boolean): unknown {
  const reason = notWritableReason(err, onSqlite);
  return reason === undefined ? err : new DataFolderError(dataDir, reason, err);
}

/** A listening address as clients should dial it: wildcard → loopback, IPv6 bracketed. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** Written to a temporary file then renamed, created 0600, so no reader sees half a key. */
export function writeCredentials(path: string, credentials: Credentials): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export function readCredentials(dataDir: string): Credentials | null {
  const path = join(resolve(dataDir), CREDENTIALS_FILE);
  if (!existsSync(path)) return null;
  try {
    const c = JSON.parse(readFileSync(path, 'utf8')) as Partial<Credentials>;
    return typeof c.baseUrl === 'string' && typeof c.apiKey === 'string' ? { baseUrl: c.baseUrl, apiKey: c.apiKey } : null;
  } catch {
    return null;
  }
}
