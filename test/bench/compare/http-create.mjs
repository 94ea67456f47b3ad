// Single-record create over HTTP under many connections, one server per child process and
// autocannon driving it from the calling process. Shared by server.bench.mjs (schemasync vs
// bare Fastify vs json-server) and compare/cases.mjs (`create-vs-bare`: the same ratio for
// any built checkout, so baseline.bench.mjs can put several commits side by side).
// `node http-create.mjs <kind> <dir> [checkout]` is the child: it serves and sends its port.
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const self = fileURLToPath(import.meta.url);
const ROOT = join(dirname(self), '..', '..', '..');
export const CONNECTIONS = 50;

if (process.argv[1] === self) await serve(process.argv[2], process.argv[3], process.argv[4] ?? ROOT);

async function serve(kind, dir, checkout) {
  // With `profile`, the V8 profiler runs over the measured window only (not start-up, not
  // the warm-up), and the profile is sent back when asked.
  const inspector = process.env.SS_BENCH_PROFILE ? new (await import('node:inspector')).Session() : null;
  const post = (method) => new Promise((resolve, reject) => inspector.post(method, (err, out) => (err ? reject(err) : resolve(out))));
  if (inspector) {
    inspector.connect();
    await post('Profiler.enable');
  }
  // The server's own CPU time is asked for around the measured window: CPU per create is a
  // second reading of the same load, beside creates per second.
  process.on('message', async (m) => {
    if (m === 'cpu') process.send({ cpu: process.cpuUsage() });
    if (m === 'profile-start') {
      await post('Profiler.start');
      process.send({ started: true });
    }
    if (m === 'profile-stop') process.send({ profile: (await post('Profiler.stop')).profile });
  });
  let port;
  let headers = {};
  let path;
  if (kind === 'ours') {
    const load = (rel) => import(pathToFileURL(join(checkout, 'dist', rel)).href);
    const { createServer } = await load('engine/server/app.js');
    const { openStore } = await load('engine/store/index.js');
    const store = openStore({ path: join(dir, 'schemasync.db') });
    // Awaited so the same code drives the synchronous store of older checkouts too.
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

function start(kind, dir, checkout, profile) {
  return new Promise((resolve, reject) => {
    const env = profile ? { ...process.env, SS_BENCH_PROFILE: '1' } : process.env;
    const child = fork(self, [kind, dir, checkout], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env });
    child.once('message', (info) => resolve({ child, ...info }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}

/** Ask the server process `question`; resolves with the `field` of its answer. */
function ask(target, question, field) {
  return new Promise((resolve) => {
    const on = (m) => {
      if (m?.[field] === undefined) return;
      target.child.off('message', on);
      resolve(m[field]);
    };
    target.child.on('message', on);
    target.child.send(question);
  });
}

const serverCpu = async (target) => {
  const cpu = await ask(target, 'cpu', 'cpu');
  return (cpu.user + cpu.system) / 1000;
};

function load(target, seconds) {
  let n = 0;
  return autocannon({
    url: `http://127.0.0.1:${target.port}${target.path}`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'content-type': 'application/json', ...target.headers },
    setupClient: (client) => {
      client.setBody(JSON.stringify({ name: `item ${n++}`, qty: n % 100 }));
    },
  });
}

/**
 * Creates per second that `kind` ('ours' | 'bare' | 'json-server') answers with 2xx over
 * `seconds`, after a 2 s warm-up, and the server process's CPU ms per create over the same
 * window. `checkout` is the built tree 'ours' loads; with `profile` the answer carries the
 * server's V8 CPU profile of the measured window.
 */
export async function measureCreate(kind, { seconds = 8, checkout = ROOT, profile = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), `ss-bench-${kind}-`));
  const target = await start(kind, dir, checkout, profile);
  try {
    await load(target, 2); // warm-up: JIT, statement caches, WAL
    const cpu0 = await serverCpu(target);
    if (profile) await ask(target, 'profile-start', 'started');
    const r = await load(target, seconds);
    const cpuMs = (await serverCpu(target)) - cpu0;
    const cpuProfile = profile ? await ask(target, 'profile-stop', 'profile') : undefined;
    const rps = r['2xx'] / seconds;
    if (r.non2xx > 0 && kind !== 'json-server') throw new Error(`${kind}: ${r.non2xx} non-2xx answers`);
    const cpuPerCreate = cpuMs / Math.max(1, r['2xx'] + r.non2xx);
    return { rps, cpuPerCreate, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors, cpuProfile };
  } finally {
    target.child.removeAllListeners('exit');
    const exited = new Promise((r) => target.child.once('exit', r));
    target.child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}
