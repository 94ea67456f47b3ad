// PostgreSQL (issue 15 "Performance", contract.md §8), all in one run on one machine:
// 1. single-record create over HTTP (autocannon, 50 connections):
//    `schemasync serve --database` with 1, 2 and 4 processes on one database (the load split
//    evenly over them, as a load balancer would), vs `serve` on SQLite, vs a bare Fastify +
//    `pg` insert route (target: 1 process ≥ 0.6 of it); more processes must not lower the
//    throughput (target: ≥ 0.8 of one process on this 2-core machine) and nothing is lost
//    (rows counted in the database = 201 answers); the bare route and the three process
//    counts alternated over BENCH_CREATE_ROUNDS (default 3, as the bulk rounds) rounds, best of each;
// 2. bulk-create of 10,000 records over HTTP (10 × POST bulk-create of 1,000) on PostgreSQL
//    vs SQLite vs a bare Fastify + `pg` route inserting the same rows (target ≥ 0.6); best of
//    BENCH_BULK_ROUNDS (default 3) rounds each, alternated.
// Its own PostgreSQL cluster (test/support/postgres.ts, the test suite's harness).
import autocannon from 'autocannon';
import { fork, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { checkTarget } from './target.mjs';
import { loadHarness } from './pg-harness.mjs';

const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'schemasync');
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = 50;
const BULK_TOTAL = 10_000;
const BULK_BATCH = 1_000;
const CREATE_ROUNDS = Math.max(1, Number(process.env.BENCH_CREATE_ROUNDS ?? 3));
const BULK_ROUNDS = Math.max(1, Number(process.env.BENCH_BULK_ROUNDS ?? 3));
const STAGES = ['lead', 'qualified', 'won', 'lost'];
const declaration = {
  declaration: {
    objects: {
      item: {
        attributes: {
          name: { type: 'text', required: true },
          qty: { type: 'integer', min: 0 },
          code: { type: 'text', unique: true },
          stage: { type: 'select', options: STAGES },
        },
      },
    },
  },
};

if (process.argv[2] === 'bare') await bare(process.argv[3]);
else await main();

/** The baseline: Fastify and a pg pool, the same columns and unique index, no validation. */
async function bare(url) {
  const Fastify = (await import('fastify')).default;
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await pool.query(`CREATE TABLE IF NOT EXISTS item (id text PRIMARY KEY, version integer NOT NULL, created_at text NOT NULL,
    updated_at text NOT NULL, created_by text, name text NOT NULL, qty integer, code text UNIQUE, stage text)`);
  const app = Fastify({ bodyLimit: 8 * 1024 * 1024 });
  app.post('/v1/records/item', async (req, reply) => {
    const now = new Date().toISOString();
    const id = randomUUID();
    const b = req.body;
    await pool.query('INSERT INTO item VALUES ($1, 1, $2, $2, $3, $4, $5, $6, $7)', [id, now, 'bench', b.name, b.qty ?? null, b.code ?? null, b.stage ?? null]);
    reply.code(201);
    return { success: true, data: { id, object: 'item', version: 1, createdAt: now, updatedAt: now, values: b } };
  });
  app.post('/v1/records/item/bulk-create', async (req, reply) => {
    const now = new Date().toISOString();
    const params = [];
    const rows = req.body.records.map((b, i) => {
      params.push(randomUUID(), now, 'bench', b.name, b.qty ?? null, b.code ?? null, b.stage ?? null);
      const p = i * 7;
      return `($${p + 1}, 1, $${p + 2}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6}, $${p + 7})`;
    });
    await pool.query(`INSERT INTO item VALUES ${rows.join(', ')}`, params);
    reply.code(201);
    return { success: true, data: { records: req.body.records.map((values, i) => ({ id: params[i * 7], object: 'item', version: 1, createdAt: now, updatedAt: now, values })) } };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.send({ baseUrl: `http://127.0.0.1:${app.server.address().port}/v1`, key: 'none' });
}

function startBare(url) {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, ['bare', url], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (info) => resolve({ ...info, stop: () => child.kill('SIGTERM') }));
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
}

/** The real `schemasync serve` (dist/), on SQLite under `dataDir` or on `database`. */
function startServe(dataDir, database) {
  const args = [bin, 'serve', '--port', '0', '--data', dataDir, '--no-rate-limit', '--quiet', '--no-studio', ...(database ? ['--database', database] : [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m || !/\ndata: .*\n/.test(out)) return;
      const key = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')).apiKey;
      resolve({ baseUrl: m[1], key, stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
}

async function post(target, path, body) {
  const res = await fetch(target.baseUrl + path, {
    method: path.startsWith('/schema') ? 'PUT' : 'POST',
    headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

/** autocannon against every target at once, the connections split between them; the 2xx summed. */
async function load(targets, seconds) {
  let n = 0;
  const results = await Promise.all(
    targets.map((t) =>
      autocannon({
        url: `${t.baseUrl}/records/item`,
        method: 'POST',
        connections: Math.max(1, Math.round(CONNECTIONS / targets.length)),
        duration: seconds,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.key}` },
        setupClient: (client) => client.setBody(JSON.stringify({ name: `item ${n++}`, qty: n % 100, stage: STAGES[n % 4] })),
      }),
    ),
  );
  const sum = (k) => results.reduce((a, r) => a + r[k], 0);
  return { ok: sum('2xx'), non2xx: sum('non2xx'), errors: sum('errors'), p50: Math.max(...results.map((r) => r.latency.p50)), p99: Math.max(...results.map((r) => r.latency.p99)) };
}

/**
 * `stats` (optional): the database's transaction counters, read around the measured run, to
 * say why throughput moves (a rollback is a refused or retried transaction).
 */
async function creates(label, targets, countRows, stats, warm = true) {
  // Warm-up (JIT, statement caches, pools), 2 s per process: each process then has seen as
  // many requests as the one of the 1-process run. With a fixed 2 s, 4 processes ran the
  // measured seconds half-optimised (node CPU per create, loaded 2-core machine: 1,269 µs
  // after 2 s of warm-up, 663 µs after 12 s; one process: 290–315 µs). Later rounds find
  // them warm.
  if (warm) await load(targets, 2 * targets.length);
  const before = countRows ? await countRows() : 0;
  const statsBefore = stats ? await stats() : undefined;
  const r = await load(targets, DURATION);
  const rps = r.ok / DURATION;
  console.log(`${label.padEnd(28)} ${rps.toFixed(0).padStart(6)} creates/s  p50 ${r.p50} ms  p99 ${r.p99} ms  non-2xx ${r.non2xx}  errors ${r.errors}`);
  if (stats) {
    const after = await stats();
    const per = (k) => ((after[k] - statsBefore[k]) / Math.max(1, r.ok)).toFixed(2);
    console.log(`${''.padEnd(28)} per 201: ${per('commits')} commits, ${per('rollbacks')} rollbacks (retries), ${per('conflicts')} recovery conflicts`);
  }
  if (r.non2xx > 0) throw new Error(`${label}: ${r.non2xx} non-2xx answers`);
  if (countRows) {
    const stored = (await countRows()) - before;
    // autocannon may stop a request whose answer was on its way: a row without a counted 2xx, never the reverse.
    const lost = r.ok - stored;
    checkTarget(`${label}: every 201 is a stored row`, lost <= 0, `${r.ok} answered 201, ${stored} rows stored`);
  }
  return rps;
}

/** One round: BULK_TOTAL records in batches; the codes of each round are its own (they are unique). Returns the ms. */
async function bulk(target, round) {
  const started = performance.now();
  for (let b = 0; b < BULK_TOTAL / BULK_BATCH; b++) {
    const records = Array.from({ length: BULK_BATCH }, (_, i) => {
      const k = b * BULK_BATCH + i;
      return { name: `bulk ${k}`, qty: k % 100, code: `B-${round}-${k}`, stage: STAGES[k % 4] };
    });
    await post(target, '/records/item/bulk-create', { records });
  }
  return performance.now() - started;
}

/**
 * BULK_ROUNDS rounds of each target, alternated (SQLite, bare, PostgreSQL, SQLite, …) so a burst
 * of load on this shared machine falls on all of them; each target's best round is its figure
 * (one round of 10 requests swung by ±25% between runs). Returns records/s by label.
 */
async function bulkRounds(targets) {
  const ms = Object.fromEntries(Object.keys(targets).map((label) => [label, []]));
  for (let round = 0; round < BULK_ROUNDS; round++) {
    for (const [label, target] of Object.entries(targets)) ms[label].push(await bulk(target, round));
  }
  const rps = {};
  for (const [label, runs] of Object.entries(ms)) {
    const best = Math.min(...runs);
    rps[label] = BULK_TOTAL / (best / 1000);
    console.log(`${label.padEnd(28)} ${runs.map((m) => m.toFixed(0)).join(', ')} ms → best ${best.toFixed(0)} ms for ${BULK_TOTAL} (${rps[label].toFixed(0)} records/s)`);
  }
  return rps;
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'ss-bench-pg-'));
  const { startPostgres } = await loadHarness(work);
  const cluster = await startPostgres();
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  const dbUrl = async (name) => {
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(cluster.url);
    u.pathname = `/${name}`;
    return u.toString();
  };
  const counter = (url) => async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const tables = (await c.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND (tablename = 'item' OR tablename LIKE 'r\\_item%')")).rows;
      return Number((await c.query(`SELECT count(*) AS n FROM "${tables[0].tablename}"`)).rows[0].n);
    } finally {
      await c.end();
    }
  };
  // PostgreSQL publishes a backend's counters at most once a second: wait for them to settle.
  const dbStats = (name) => async () => {
    await new Promise((r) => setTimeout(r, 1_500));
    const row = (await admin.query('SELECT xact_commit, xact_rollback, conflicts FROM pg_stat_database WHERE datname = $1', [name])).rows[0];
    return { commits: Number(row.xact_commit), rollbacks: Number(row.xact_rollback), conflicts: Number(row.conflicts) };
  };
  const stops = [];
  try {
    console.log(`single-record create over HTTP, ${CONNECTIONS} connections, ${DURATION} s each; PostgreSQL on 127.0.0.1:${cluster.port}; load average ${loadavg()[0].toFixed(1)}`);
    const sqliteDir = join(work, 'sqlite');
    const sqlite = await startServe(sqliteDir);
    stops.push(sqlite.stop);
    await post(sqlite, '/schema/sources/bench', declaration);
    const onSqlite = await creates('serve (SQLite)', [sqlite]);

    // The bare route and 1, 2 and 4 processes (each on its own database), alternated over
    // CREATE_ROUNDS rounds (the order reversed every other round), best of each: a burst of
    // load on this shared machine during one 8 s run moved a ratio by ±0.15, and 2 and 4
    // processes measured once each, after the others, met the autovacuum of the databases
    // before them (4 processes read 0.62–0.98 of one in two runs of the same build).
    const bareUrl = await dbUrl('bare');
    const bareServer = await startBare(bareUrl);
    stops.push(bareServer.stop);
    const sides = [{ key: 'bare', label: 'bare Fastify + pg', targets: [bareServer], url: bareUrl }];
    for (const n of [1, 2, 4]) {
      const url = await dbUrl(`ours${n}`);
      const dataDir = join(work, `pg${n}`);
      const first = await startServe(dataDir, url);
      const procs = [first, ...(await Promise.all(Array.from({ length: n - 1 }, () => startServe(dataDir, url))))];
      stops.push(...procs.map((p) => p.stop));
      await post(first, '/schema/sources/bench', declaration);
      sides.push({ key: n, label: `serve (PostgreSQL) × ${n}`, targets: procs, url, db: `ours${n}` });
    }
    // What a run leaves (40,000–70,000 new rows, their GIN pending list) is vacuumed before
    // the next run starts: autovacuum would take it up at a moment of its own choosing, inside
    // whichever run came next (one process read 3,410 creates/s right after the bare route's
    // run and 4,671 in the next round).
    const vacuumed = async (url) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query('VACUUM (ANALYZE)');
      } finally {
        await c.end();
      }
    };
    const best = {};
    for (let round = 1; round <= CREATE_ROUNDS; round++) {
      for (const side of round % 2 ? sides : [...sides].reverse()) {
        const rps = await creates(`${side.label} (${round})`, side.targets, counter(side.url), side.db && dbStats(side.db), round === 1);
        best[side.key] = Math.max(best[side.key] ?? 0, rps);
        await vacuumed(side.url);
      }
    }
    for (const side of sides) for (const t of side.targets) t.stop();
    const onBare = best.bare;
    const byProcesses = { 1: best[1], 2: best[2], 4: best[4] };
    console.log(`best: bare ${onBare.toFixed(0)} creates/s, PostgreSQL × 1 / 2 / 4 ${[1, 2, 4].map((n) => byProcesses[n].toFixed(0)).join(' / ')} creates/s`);

    const vsBare = byProcesses[1] / onBare;
    console.log(`ratio PostgreSQL (1 process) / bare Fastify+pg: ${vsBare.toFixed(2)}  (target ≥ 0.60)`);
    console.log(`ratio PostgreSQL (1 process) / SQLite:          ${(byProcesses[1] / onSqlite).toFixed(2)}`);
    for (const n of [2, 4]) console.log(`ratio PostgreSQL ${n} processes / 1 process:     ${(byProcesses[n] / byProcesses[1]).toFixed(2)}  (target ≥ 0.80)`);
    checkTarget('PostgreSQL creates/s vs bare Fastify + pg', vsBare >= 0.6, `${vsBare.toFixed(2)} (≥ 0.60)`);
    for (const n of [2, 4]) {
      const r = byProcesses[n] / byProcesses[1];
      checkTarget(`PostgreSQL creates/s with ${n} processes vs 1`, r >= 0.8, `${r.toFixed(2)} (≥ 0.80)`);
    }

    // The create runs' databases go first: their autovacuum (GIN pending lists, 100,000s of
    // rows) would otherwise run beside the bulk rounds and take the CPU they are measured on.
    await new Promise((r) => setTimeout(r, 500));
    for (const name of ['bare', 'ours1', 'ours2', 'ours4']) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query('CHECKPOINT');
    console.log(`\nbulk-create ${BULK_TOTAL} over HTTP (${BULK_TOTAL / BULK_BATCH} × ${BULK_BATCH}), best of ${BULK_ROUNDS} alternated rounds`);
    const bulkSqlite = await startServe(join(work, 'bulk-sqlite'));
    stops.push(bulkSqlite.stop);
    await post(bulkSqlite, '/schema/sources/bench', declaration);
    const bBareServer = await startBare(await dbUrl('bulkbare'));
    stops.push(bBareServer.stop);
    const bulkUrl = await dbUrl('bulkours');
    const bulkPg = await startServe(join(work, 'bulk-pg'), bulkUrl);
    stops.push(bulkPg.stop);
    await post(bulkPg, '/schema/sources/bench', declaration);
    const labels = { sqlite: 'serve (SQLite)', bare: 'bare Fastify + pg', pg: 'serve (PostgreSQL)' };
    const rps = await bulkRounds({ [labels.sqlite]: bulkSqlite, [labels.bare]: bBareServer, [labels.pg]: bulkPg });
    const [bSqlite, bBare, bPg] = [rps[labels.sqlite], rps[labels.bare], rps[labels.pg]];
    const stored = await counter(bulkUrl)();
    checkTarget('PostgreSQL bulk-create: every record stored', stored === BULK_TOTAL * BULK_ROUNDS, `${stored} of ${BULK_TOTAL * BULK_ROUNDS}`);
    const bulkVsBare = bPg / bBare;
    console.log(`ratio PostgreSQL / bare Fastify+pg: ${bulkVsBare.toFixed(2)}  (target ≥ 0.60)`);
    console.log(`ratio PostgreSQL / SQLite:          ${(bPg / bSqlite).toFixed(2)}`);
    checkTarget('PostgreSQL bulk-create 10,000 vs bare Fastify + pg', bulkVsBare >= 0.6, `${bulkVsBare.toFixed(2)} (≥ 0.60)`);
  } finally {
    for (const stop of stops) stop();
    await admin.end().catch(() => undefined);
    cluster.destroy();
    rmSync(work, { recursive: true, force: true });
  }
}
