// Store performance (issue 3 "Performance"), measured against its baseline in the same run:
// 1. bulk-create of 10,000 records in ONE real HTTP call (POST /v1/records/deal/bulk-create
//    on a createServer instance over a fresh store) vs a raw better-sqlite3 insert loop of
//    the same rows in one transaction (target: server ≥ 0.5 of raw throughput);
// 2. search of 100,000 records with a filter on an indexed (unique) attribute (p50 < 10 ms);
// 3. RSS after loading 100,000 records.
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createServer } from '../../dist/engine/server/app.js';
import { openStore } from '../../dist/engine/store/index.js';

const actor = { keyId: 'bench', role: 'owner', scopes: null };
const dir = mkdtempSync(join(tmpdir(), 'ss-bench-store-'));
const STAGES = ['lead', 'qualified', 'won', 'lost'];
const row = (i) => ({ code: `C-${i}`, title: `Deal number ${i}`, amount: (i * 37) % 10000, stage: STAGES[i % 4], closed: i % 3 === 0 });

const attributes = [
  { name: 'code', type: 'text', unique: true },
  { name: 'title', type: 'text', maxLength: 200 },
  { name: 'amount', type: 'number', min: 0 },
  { name: 'stage', type: 'select', options: STAGES },
  { name: 'closed', type: 'boolean' },
];

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

try {
  // --- 1. one HTTP bulk-create of 10,000 vs raw loop (best of 5 each, fresh table each time)
  const N = 10_000;
  const rows = Array.from({ length: N }, (_, i) => row(i));
  // The client's serialisation is not the server's cost: the body is built once.
  const body = JSON.stringify({ records: rows });
  const rawTimes = [];
  const httpTimes = [];
  const directTimes = [];
  for (let round = 0; round < 5; round++) {
    const raw = new Database(join(dir, `raw-${round}.db`));
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = NORMAL');
    raw.exec(
      'CREATE TABLE r (id TEXT PRIMARY KEY, version INTEGER, created_at TEXT, updated_at TEXT, created_by TEXT, code TEXT, title TEXT, amount REAL, stage TEXT, closed INTEGER) STRICT; CREATE UNIQUE INDEX r_code ON r(code)',
    );
    const ins = raw.prepare('INSERT INTO r VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    let t = performance.now();
    raw.transaction(() => {
      const now = new Date().toISOString();
      for (const r of rows) ins.run(randomUUID(), 1, now, now, 'bench', r.code, r.title, r.amount, r.stage, r.closed ? 1 : 0);
    })();
    rawTimes.push(performance.now() - t);
    raw.close();

    const store = openStore({ path: join(dir, `store-${round}.db`), filesDir: false });
    store.createObject({ name: 'deal', attributes }, { kind: 'runtime' });
    const { secret } = store.createKey({ name: 'bench', role: 'owner', scopes: null });
    const app = await createServer({ store, rateLimit: false, logger: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${app.server.address().port}/v1/records/deal/bulk-create`;
    t = performance.now();
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` }, body });
    const text = await res.text();
    httpTimes.push(performance.now() - t);
    if (res.status !== 201) throw new Error(`bulk-create answered ${res.status}: ${text.slice(0, 300)}`);
    if (store.countRecords('deal') !== N) throw new Error(`expected ${N} records, found ${store.countRecords('deal')}`);
    await app.close();
    store.close();

    // The same call without HTTP (store.bulkCreate in-process), to show where the time goes.
    const direct = openStore({ path: join(dir, `direct-${round}.db`), filesDir: false });
    direct.createObject({ name: 'deal', attributes }, { kind: 'runtime' });
    t = performance.now();
    direct.bulkCreate('deal', rows, actor);
    directTimes.push(performance.now() - t);
    direct.close();
  }
  const rawMs = Math.min(...rawTimes);
  const httpMs = Math.min(...httpTimes);
  console.log(`bulk-create ${N} in one HTTP call (POST /v1/records/deal/bulk-create, ${(body.length / 1024 / 1024).toFixed(2)} MB body): server ${httpMs.toFixed(1)} ms, raw better-sqlite3 loop ${rawMs.toFixed(1)} ms`);
  console.log(`  ratio server/raw throughput: ${(rawMs / httpMs).toFixed(2)} (target ≥ 0.5)`);
  const directMs = Math.min(...directTimes);
  console.log(`  (same rows through store.bulkCreate in-process, no HTTP: ${directMs.toFixed(1)} ms, ratio ${(rawMs / directMs).toFixed(2)})`);

  // --- 2. 100k records, search on an indexed attribute
  const big = openStore({ path: join(dir, 'big.db'), filesDir: false });
  big.createObject({ name: 'deal', attributes }, { kind: 'runtime' });
  const M = 100_000;
  let t = performance.now();
  for (let b = 0; b < M / 1000; b++) big.bulkCreate('deal', Array.from({ length: 1000 }, (_, i) => row(b * 1000 + i)), actor);
  console.log(`loaded ${M} records in ${((performance.now() - t) / 1000).toFixed(2)} s`);
  global.gc?.();
  console.log(`RSS after loading ${M} records: ${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MB`);

  const times = [];
  for (let i = 0; i < 500; i++) {
    const code = `C-${(i * 7919) % M}`;
    t = performance.now();
    const page = big.search('deal', { filter: { code } });
    times.push(performance.now() - t);
    if (page.records.length !== 1) throw new Error(`expected one hit for ${code}`);
  }
  const rangeTimes = [];
  for (let i = 0; i < 200; i++) {
    t = performance.now();
    big.search('deal', { filter: { code: { in: [`C-${i}`, `C-${i + 1}`, `C-${i + 2}`] } }, sort: [{ attribute: 'code' }], limit: 50 });
    rangeTimes.push(performance.now() - t);
  }
  console.log(`search ${M} records, equality on the indexed attribute: p50 ${median(times).toFixed(3)} ms (target < 10 ms)`);
  console.log(`search ${M} records, in-list on the indexed attribute, sorted: p50 ${median(rangeTimes).toFixed(3)} ms`);
  t = performance.now();
  const v = big.facts().violations('deal', 'title', { name: 'title', type: 'text', maxLength: 5 });
  console.log(`data probe over ${M} records (maxLength check): ${(performance.now() - t).toFixed(0)} ms, ${v[0]?.count ?? 0} violations`);
  big.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
