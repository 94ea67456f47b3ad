import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { request } from 'node:http';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createServer, type CreateServerOptions } from '../../engine/server/app.js';
import { openStore } from '../../engine/store/index.js';
import { openStoreAt } from '../../engine/store/open.js';
import type { Store } from '../../engine/store/types.js';
import { testBackend } from '../support/backend.js';
import { createTestDatabase } from '../support/postgres-db.js';

/**
 * API test harness: a real server on 127.0.0.1 port 0 over a real store — a SQLite file in
 * a temporary folder, or a fresh database of the run's PostgreSQL cluster when the vitest
 * project is `postgres` (vitest.config.ts; file bytes in the temporary folder either way) —,
 * an owner key, and a tiny fetch wrapper.
 */
export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as-is (for malformed JSON tests). */
  raw?: string;
  headers?: Record<string, string>;
  /** The key to send; null sends none; default the owner key. */
  key?: string | null;
}

export interface TestServer {
  app: FastifyInstance;
  store: Store;
  base: string;
  dataDir: string;
  ownerKey: string;
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** Create a key with this role (and scopes) through the store; returns its secret. */
  keyFor(role: string, scopes?: string[] | null): Promise<string>;
  /** POST /schema/objects as the owner; fails the test, with the answer, unless it is 201. */
  defineObject(name: string, attributes?: Record<string, unknown>[]): Promise<void>;
  close(): Promise<void>;
}

const postgresByDataDir = new Map<string, string>();

/**
 * The store of the vitest project's backend (test/support/backend.ts): the SQLite file under
 * `dataDir`, or a database of the run's PostgreSQL cluster (test/support/postgres-global.ts)
 * opened the way `serve --database` opens it (engine/store/open.ts), file bytes under `dataDir`.
 */
export async function openTempStore(dataDir: string): Promise<Store> {
  if (testBackend() === 'sqlite') return openStore({ path: join(dataDir, 'schemasync.db') });
  // One database per data folder: a store opened again on the same folder (a restart)
  // finds the data it left, as the SQLite file under the folder would.
  let url = postgresByDataDir.get(dataDir);
  if (url === undefined) {
    url = (await createTestDatabase('api')).url;
    postgresByDataDir.set(dataDir, url);
  }
  return openStoreAt({ path: join(dataDir, 'schemasync.db'), filesDir: join(dataDir, 'files'), database: url });
}

/**
 * Reads the tables of the store `openTempStore(dataDir)` opened, with plain SQL and no store
 * code in between (a test checks what was written, not what the store says it wrote). The
 * statements must be valid on both backends; list columns come back as arrays on both
 * (SQLite's JSON text is parsed).
 */
export async function openRawReader(dataDir: string): Promise<{ all<R>(sql: string): Promise<R[]>; close(): Promise<void> }> {
  const url = postgresByDataDir.get(dataDir);
  if (testBackend() === 'sqlite' || url === undefined) {
    const db = new Database(join(dataDir, 'schemasync.db'), { readonly: true });
    return { all: async <R>(sql: string) => db.prepare(sql).all() as R[], close: async () => void db.close() };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return { all: async <R>(sql: string) => (await client.query(sql)).rows as R[], close: () => client.end() };
}

export async function startTestServer(
  options: { store?: Store; dataDir?: string; wrap?: (store: Store) => Store; keepData?: boolean } & Partial<
    Omit<CreateServerOptions, 'store'>
  > = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'schemasync-api-'));
  const inner = options.store ?? (await openTempStore(dataDir));
  const store = options.wrap ? options.wrap(inner) : inner;
  const { store: _s, dataDir: _d, wrap: _w, keepData, ...rest } = options;
  const app = await createServer({ rateLimit: false, ...rest, store });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const base = `http://127.0.0.1:${port}/v1`;
  const ownerKey = (await store.createKey({ name: 'test owner', role: 'owner', scopes: null })).secret;

  async function call(method: string, path: string, o: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...o.headers };
    const key = o.key === undefined ? ownerKey : o.key;
    if (key !== null && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization' || h.toLowerCase() === 'x-api-key')) {
      headers['authorization'] = `Bearer ${key}`;
    }
    let body: string | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(base + path, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  return {
    app,
    store,
    base,
    dataDir,
    ownerKey,
    call,
    keyFor: async (role, scopes = null) => (await store.createKey({ name: `${role} key`, role, scopes: scopes as never })).secret,
    async defineObject(name, attributes = []) {
      const made = await call('POST', '/schema/objects', { body: { name, attributes } });
      if (made.status !== 201) throw new Error(`creating object ${name} answered ${made.status}: ${made.text}`);
    },
    async close() {
      await app.close();
      await store.close();
      if (!keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The spec's error envelope, exactly: these keys and no others. */
export function expectError(
  reply: Reply,
  expected: { status: number; code?: string | undefined; message?: string | RegExp; errors?: boolean },
): void {
  const b = reply.body as Record<string, unknown>;
  const problems: string[] = [];
  if (reply.status !== expected.status) problems.push(`status ${reply.status} != ${expected.status}`);
  if (b?.['success'] !== false) problems.push('success is not false');
  if (b?.['statusCode'] !== expected.status) problems.push(`statusCode ${String(b?.['statusCode'])}`);
  if (typeof b?.['message'] !== 'string') problems.push('message missing');
  if (expected.code === undefined) {
    if ('code' in (b ?? {})) problems.push(`unexpected code ${String(b['code'])}`);
  } else if (b?.['code'] !== expected.code) problems.push(`code ${String(b?.['code'])} != ${expected.code}`);
  if (expected.message instanceof RegExp ? !expected.message.test(String(b?.['message'])) : expected.message !== undefined && b?.['message'] !== expected.message) {
    problems.push(`message "${String(b?.['message'])}"`);
  }
  const extra = Object.keys(b ?? {}).filter((k) => !['success', 'statusCode', 'message', 'code', 'errors'].includes(k));
  if (extra.length) problems.push(`extra keys ${extra.join(',')}`);
  if (expected.errors === true) {
    const errs = b?.['errors'];
    if (!Array.isArray(errs) || errs.length === 0) problems.push('errors missing');
    else for (const e of errs as { path?: unknown; message?: unknown }[]) {
      if (!Array.isArray(e.path) || typeof e.message !== 'string') problems.push(`bad errors item ${JSON.stringify(e)}`);
    }
  }
  if (expected.errors === false && 'errors' in (b ?? {})) problems.push('unexpected errors');
  if (!UUID_RE.test(reply.headers.get('x-request-id') ?? '')) problems.push('x-request-id missing');
  if (problems.length) throw new Error(`${problems.join('; ')}\nbody: ${reply.text}`);
}

/** A pino destination that keeps each JSON log line, parsed, for a test to read. */
export function logCapture(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { lines, stream };
}

/** Declarations as the sync tests write them (a loose shape: the server validates). */
export type DeclAttrs = Record<string, Record<string, unknown>>;
export type Decl = { objects: Record<string, { renamedFrom?: string; label?: string; attributes: DeclAttrs }>; views: Record<string, unknown> };

/** PUT /schema/sources/crm with this declaration (and dryRun / allowDestructive). */
export function pushDeclaration(s: TestServer, decl: Decl, opts: { dryRun?: boolean; allowDestructive?: boolean | string[] } = {}): Promise<Reply> {
  return s.call('PUT', '/schema/sources/crm', { body: { declaration: decl, ...opts } });
}

/** Every entry under <dataDir>/files: bytes, temporaries and shard folders alike. */
export function fileEntries(dataDir: string, root = join(dataDir, 'files')): string[] {
  if (!existsSync(root)) return [];
  const out: string[] = [];
  for (const e of readdirSync(root, { withFileTypes: true })) {
    out.push(e.name);
    if (e.isDirectory()) out.push(...fileEntries(dataDir, join(root, e.name)));
  }
  return out;
}

/**
 * How many stored files (not shard folders) are under `root` (<dataDir>/files).
 * `temporaries: false` leaves out uploads still being written (`.tmp-*`).
 */
export function blobCount(root: string, opts: { temporaries?: boolean } = {}): number {
  let n = 0;
  for (const e of readdirSync(root, { withFileTypes: true })) {
    if (e.isDirectory()) n += blobCount(join(root, e.name), opts);
    else if (opts.temporaries !== false || !e.name.startsWith('.tmp-')) n += 1;
  }
  return n;
}

/**
 * A POST whose headers the server has read (it answered `100 Continue`, so the request is
 * in flight) and whose body has only begun: a stalled client, until finish() sends the rest.
 */
export function stalledRequest(
  baseUrl: string,
  apiKey: string,
  body = JSON.stringify({ name: 'stalled', attributes: [{ name: 'body', type: 'text' }] }),
): { arrived: Promise<void>; outcome: Promise<string>; finish(): void } {
  const req = request(new URL(`${baseUrl}/schema/objects`), {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
  });
  const arrived = new Promise<void>((resolve) => req.once('continue', () => req.write(body.slice(0, 8), () => resolve())));
  const outcome = new Promise<string>((resolve) => {
    req.once('response', (res) => {
      res.resume();
      resolve(`answered ${res.statusCode}`);
    });
    req.once('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code ?? err.message}`));
  });
  req.flushHeaders();
  return { arrived, outcome, finish: () => req.end(body.slice(8)) };
}

/** Rejects when `p` takes longer than `ms`: a bound on a hang, not a measurement. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} still pending after ${ms} ms`)), ms))),
  ]);
}

