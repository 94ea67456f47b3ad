// One benchmark case against one built checkout: `node cases.mjs <checkout> <case>` prints
// one JSON line { value, unit, better, also?, detail? } on stdout. Run by baseline.bench.mjs for the
// current tree and for the baseline commit in turn; both are driven through the same public
// surface (store, server, CLI), awaiting every store call so the same code times the old
// synchronous store and the new asynchronous one.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDev } from '../dev-server.mjs';
import { measureCreate } from './http-create.mjs';
import { syncThousand } from './sync-case.mjs';

const [checkout, name] = process.argv.slice(2);
const load = (rel) => import(pathToFileURL(join(checkout, 'dist', rel)).href);
const { openStore } = await load('engine/store/index.js');
const { createServer } = await load('engine/server/app.js');
const owner = { kind: 'runtime' };
const actor = { keyId: 'bench', role: 'owner', scopes: null };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ATTRS = [
  { name: 'title', type: 'text', required: true },
  { name: 'amount', type: 'number' },
  { name: 'stage', type: 'select', options: ['lead', 'won', 'lost'] },
  { name: 'closed', type: 'boolean' },
  { name: 'tags', type: 'multiselect', options: ['a', 'b', 'c'] },
];
const row = (i) => ({ title: `deal ${i}`, amount: (i * 7919) % 100000, stage: ['lead', 'won', 'lost'][i % 3], closed: i % 2 === 0, tags: i % 5 === 0 ? ['a', 'c'] : ['b'] });

async function withServer(fn) {
  const dir = mkdtempSync(join(tmpdir(), 'ss-cmp-'));
  const store = openStore({ path: join(dir, 'schemasync.db'), filesDir: false });
  await store.createObject({ name: 'deal', attributes: ATTRS }, owner);
  const { secret } = await store.createKey({ name: 'bench', role: 'owner', scopes: null });
  const app = await createServer({ store, logger: false, rateLimit: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${app.server.address().port}/v1`;
  const post = async (path, body) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  try {
    return await fn({ post, store });
  } finally {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const cases = {
  /** Single-record creates over HTTP, 8 in flight: records per second. */
  async 'create-http'() {
    return withServer(async ({ post }) => {
      const run = async (n) => {
        let next = 0;
        const worker = async () => {
          while (next < n) await post('/records/deal', row(next++));
        };
        const t = performance.now();
        await Promise.all(Array.from({ length: 8 }, worker));
        return (n / (performance.now() - t)) * 1000;
      };
      await run(300);
      return { value: await run(3000), unit: 'records/s', better: 'higher' };
    });
  },
  /**
   * Single-record creates over HTTP, 50 connections (autocannon, server in its own process)
   * as a fraction of a bare Fastify + better-sqlite3 route doing the same insert, measured
   * right after it in the same process: the ratio server.bench.mjs checks (target ≥ 0.6).
   * Also the same ratio in server CPU per create (bare's / ours), steadier on a busy machine.
   */
  async 'create-vs-bare'() {
    const seconds = Number(process.env.BENCH_SECONDS ?? 8);
    const ours = await measureCreate('ours', { seconds, checkout });
    const bare = await measureCreate('bare', { seconds });
    const us = (r) => (r.cpuPerCreate * 1000).toFixed(0);
    return {
      value: ours.rps / bare.rps,
      unit: '× bare',
      better: 'higher',
      also: { 'CPU/create': bare.cpuPerCreate / ours.cpuPerCreate },
      detail: `${ours.rps.toFixed(0)} vs ${bare.rps.toFixed(0)} creates/s, ${us(ours)} vs ${us(bare)} µs CPU/create`,
    };
  },
  /**
   * One POST bulk-create of 10,000 records: ms, the median of 10 after one warm-up post. With 5
   * (as first written) one sample in five was the second post, which on this tree still warms
   * up (~40 ms over its later ones; af248ac's ~20), and one slow neighbour moved the median: the
   * same tree's medians spread 130–200 ms between rounds. That second post is reported apart
   * (`also`, not gated), so the warm-up stays in view.
   */
  async 'bulk-http'() {
    return withServer(async ({ post }) => {
      const records = Array.from({ length: 10_000 }, (_, i) => row(i));
      const times = [];
      for (let r = 0; r < 11; r++) {
        const t = performance.now();
        await post('/records/deal/bulk-create', { records });
        if (r > 0) times.push(performance.now() - t);
      }
      return { value: median(times), unit: 'ms', better: 'lower', also: { 'second post': times[0] } };
    });
  },
  /** A filtered, sorted, counted search page over 100,000 records (HTTP): ms, median of 60. */
  async 'search-100k'() {
    return withServer(async ({ post, store }) => {
      for (let b = 0; b < 10; b++) await store.bulkCreate('deal', Array.from({ length: 10_000 }, (_, i) => row(b * 10_000 + i)), actor);
      const times = [];
      for (let q = 0; q < 70; q++) {
        const t = performance.now();
        await post('/records/deal/search', { filter: { stage: 'won', amount: { gte: (q * 1000) % 90000 } }, sort: [{ attribute: 'amount', direction: 'desc' }], limit: 50 });
        if (q >= 10) times.push(performance.now() - t);
      }
      return { value: median(times), unit: 'ms', better: 'lower' };
    });
  },
  /** A push adding one attribute, then one changing a type, to a source of 1,000 objects: ms. */
  async 'sync-1000'() {
    const dir = mkdtempSync(join(tmpdir(), 'ss-cmp-'));
    try {
      return { value: median(await syncThousand(openStore, join(dir, 'schemasync.db'))), unit: 'ms', better: 'lower' };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  /** `schemasync dev`: a saved YAML edit until the server shows it: ms, median of 15. */
  async watch() {
    const dir = mkdtempSync(join(tmpdir(), 'ss-cmp-watch-'));
    writeFileSync(join(dir, 'schemasync.yaml'), 'source: crm\nschema: schema\n');
    mkdirSync(join(dir, 'schema'));
    const yamlOf = (n) => `objects:\n  bench:\n    attributes:\n      title: { type: text }\n${Array.from({ length: n }, (_, i) => `      f${i + 1}: { type: integer }\n`).join('')}`;
    writeFileSync(join(dir, 'schema', 'bench.yaml'), yamlOf(0));
    const { sleep, waitOut, stop } = startDev(checkout, dir);
    try {
      const base = (await waitOut(/server on (http:\/\/\S+\/v1)/))[1];
      await waitOut(/✓ synced crm/);
      const { apiKey } = JSON.parse(readFileSync(join(dir, '.schemasync', 'credentials.json'), 'utf8'));
      const has = async (attr) => {
        const res = await fetch(`${base}/schema/objects/bench`, { headers: { authorization: `Bearer ${apiKey}` } });
        return res.status === 200 && (await res.json()).data.attributes.some((a) => a.name === attr);
      };
      const times = [];
      for (let i = 1; i <= 16; i++) {
        const t = performance.now();
        writeFileSync(join(dir, 'schema', 'bench.yaml'), yamlOf(i));
        while (!(await has(`f${i}`))) await sleep(2);
        if (i > 1) times.push(performance.now() - t);
        await sleep(60);
      }
      return { value: median(times), unit: 'ms', better: 'lower' };
    } finally {
      await stop('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

if (!cases[name]) throw new Error(`unknown case ${name}: ${Object.keys(cases).join(', ')}`);
console.log(JSON.stringify(await cases[name]()));
process.exit(0);
