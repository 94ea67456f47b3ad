// Single-record create over HTTP, many connections (issue 3 "Performance"):
//   schemasync's server  vs  a bare Fastify + better-sqlite3 handler doing the same insert
//   (target ≥ 0.6 of it)  vs  json-server 0.17 (target ≥ 3×). Same run, same machine.
// Each server runs in its own child process; autocannon drives it from this one.
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { checkTarget } from './target.mjs';

const require = createRequire(import.meta.url);
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = 50;

const role = process.argv[2];
if (role) await serve(role, process.argv[3]);
else await main();

async function serve(kind, dir) {
  let port;
  let headers = {};
  let path;
  if (kind === 'ours') {
    const { createServer } = await import('../../dist/engine/server/app.js');
    const { openStore } = await import('../../dist/engine/store/index.js');
    const store = openStore({ path: join(dir, 'schemasync.db') });
    await store.createObject(
      { name: 'item', attributes: [{ name: 'name', type: 'text', required: true }, { name: 'qty', type: 'integer', min: 0 }] },
      { kind: 'runtime' },
    );
    const { secret } = await store.createKey({ name: 'bench', role: 'owner', scopes: null });
    const app = await createServer({ store, rateLimit: false, logger: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = app.server.address().port;
    headers = { authorization: `Bearer ${secret}` };
    path = '/v1/records/item';
  } else if (kind === 'bare') {
    const Fastify = (await import('fastify')).default;
    const Database = require('better-sqlite3');
    const db = new Database(join(dir, 'bare.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE item (id TEXT PRIMARY KEY, version INTEGER NOT NULL, created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL, created_by TEXT, name TEXT NOT NULL, qty INTEGER) STRICT`);
    const insert = db.prepare('INSERT INTO item VALUES (?, 1, ?, ?, ?, ?, ?)');
    const app = Fastify();
    app.post('/v1/records/item', async (req, reply) => {
      const now = new Date().toISOString();
      const id = randomUUID();
      insert.run(id, now, now, 'bench', req.body.name, req.body.qty ?? null);
      reply.code(201);
      return { success: true, data: { id, object: 'item', version: 1, createdAt: now, updatedAt: now, values: req.body } };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = app.server.address().port;
    path = '/v1/records/item';
  } else {
    const jsonServer = require('json-server');
    const file = join(dir, 'db.json');
    writeFileSync(file, JSON.stringify({ items: [] }));
    const server = jsonServer.create();
    server.use(jsonServer.defaults({ logger: false }));
    server.use(jsonServer.bodyParser);
    server.use(jsonServer.router(file));
    const listener = server.listen(0, '127.0.0.1');
    await new Promise((r) => listener.once('listening', r));
    port = listener.address().port;
    path = '/items';
  }
  process.send({ port, headers, path });
}

function start(kind, dir) {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, [kind, dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (info) => resolve({ child, ...info }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}

async function load(target, seconds) {
  let n = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${target.port}${target.path}`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'content-type': 'application/json', ...target.headers },
    setupClient: (client) => {
      client.setBody(JSON.stringify({ name: `item ${n++}`, qty: n % 100 }));
    },
  });
  return result;
}

async function measure(kind) {
  const dir = mkdtempSync(join(tmpdir(), `ss-bench-${kind}-`));
  const target = await start(kind, dir);
  try {
    await load(target, 2); // warm-up: JIT, statement caches, WAL
    const r = await load(target, DURATION);
    const ok = r['2xx'];
    const rps = ok / DURATION;
    console.log(
      `${kind.padEnd(12)} ${rps.toFixed(0).padStart(7)} creates/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  non-2xx ${r.non2xx}  errors ${r.errors}`,
    );
    if (r.non2xx > 0 && kind !== 'json-server') throw new Error(`${kind}: ${r.non2xx} non-2xx answers`);
    return rps;
  } finally {
    target.child.removeAllListeners('exit');
    target.child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  console.log(`single-record create, ${CONNECTIONS} connections, ${DURATION} s each`);
  // BENCH_ONLY=bare,json-server measures a subset (checking the harness without the store).
  const only = process.env.BENCH_ONLY?.split(',');
  const run = async (k) => (!only || only.includes(k) ? measure(k) : NaN);
  const ours = await run('ours');
  const bare = await run('bare');
  const js = await run('json-server');
  const vsBare = ours / bare;
  const vsJs = ours / js;
  console.log(`ratio schemasync / bare fastify+sqlite: ${vsBare.toFixed(2)}  (target ≥ 0.60)`);
  console.log(`ratio schemasync / json-server 0.17:   ${vsJs.toFixed(2)}×  (target ≥ 3×)`);
  if (!only || (only.includes('ours') && only.includes('bare'))) checkTarget('creates/s vs bare Fastify + better-sqlite3', vsBare >= 0.6, `${vsBare.toFixed(2)} (≥ 0.60)`);
  if (!only || (only.includes('ours') && only.includes('json-server'))) checkTarget('creates/s vs json-server', vsJs >= 3, `${vsJs.toFixed(2)}× (≥ 3×)`);
}
