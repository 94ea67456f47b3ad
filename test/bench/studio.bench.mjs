// Studio's records table (issue 20 "Performance"): the time from navigating to an
// object's table until its first page of rows is on screen, in Debian's Chromium, for a
// 100,000-row object against a 100-row baseline measured in the same run. Target: the
// large table under 300 ms. Needs /usr/bin/chromium (or CHROMIUM_PATH).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const ROOT = new URL('../../', import.meta.url).pathname;
const ROWS = Number(process.env.STUDIO_BENCH_ROWS ?? 100_000);
const RUNS = 7;
const TARGET_MS = 300;

const dataDir = mkdtempSync(join(tmpdir(), 'schemasync-studio-bench-'));
const child = spawn(process.execPath, [join(ROOT, 'bin/schemasync'), '--no-color', 'serve', '--port', '0', '--data', dataDir, '--no-rate-limit', '--quiet'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
const started = await new Promise((resolve, reject) => {
  child.stdout.on('data', (d) => {
    out += d;
    const base = /listening on (http:\/\/\S+\/v1)/.exec(out)?.[1];
    const key = /owner API key \(shown once\): (\S+)/.exec(out)?.[1];
    if (base && key) resolve({ base, key });
  });
  child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
});
const { base, key } = started;
const call = async (method, path, body) => {
  const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.json();
};

const attributes = [
  { name: 'title', type: 'text' },
  { name: 'stage', type: 'select', options: ['lead', 'won', 'lost'] },
  { name: 'amount', type: 'number' },
  { name: 'due', type: 'date' },
];
const row = (i) => ({ title: `Row ${i}`, stage: ['lead', 'won', 'lost'][i % 3], amount: i * 1.5, due: `2026-0${1 + (i % 9)}-1${i % 10}` });
async function fill(name, n) {
  await call('POST', '/schema/objects', { name, attributes });
  for (let at = 0; at < n; at += 1000) {
    await call('POST', `/records/${name}/bulk-create`, { records: Array.from({ length: Math.min(1000, n - at) }, (_, i) => row(at + i)) });
  }
}
const t0 = Date.now();
await fill('small', 100);
await fill('big', ROWS);
console.log(`seeded ${ROWS} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'],
});
const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
const origin = base.replace(/\/v1$/, '');
await page.goto(`${origin}/_/`);
await page.getByLabel('API key').fill(key);
await page.getByLabel('API key').press('Enter');
await page.getByRole('heading', { name: 'Objects' }).waitFor();

/** ms from setting the hash until the table's 50 rows of `name` are in the document. */
const firstPage = (name) =>
  page.evaluate(
    (name) =>
      new Promise((resolve) => {
        const t = performance.now();
        location.hash = `#/records/${name}`;
        const done = () => {
          const caption = document.querySelector('table.records caption');
          if (caption?.textContent?.startsWith(`Records of ${name},`) && document.querySelectorAll('table.records tbody tr').length === 50) resolve(performance.now() - t);
          else requestAnimationFrame(done);
        };
        done();
      }),
    name,
  );
const measure = async (name) => {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    await page.evaluate(() => (location.hash = '#/objects'));
    await page.getByRole('heading', { name: 'Objects' }).waitFor();
    times.push(await firstPage(name));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
};
await measure('small'); // warm-up: modules, schema cache, prepared statements
const small = await measure('small');
const big = await measure('big');
console.log(`first page, 100 rows (baseline):      ${small.toFixed(0)} ms (median of ${RUNS})`);
console.log(`first page, ${ROWS} rows:         ${big.toFixed(0)} ms (median of ${RUNS}), ${(big / small).toFixed(2)}× the baseline`);
const missed = big >= TARGET_MS;
console.log(missed ? `!!! MISSED: ${big.toFixed(0)} ms is not under the ${TARGET_MS} ms target` : `target < ${TARGET_MS} ms: met`);

await browser.close();
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
rmSync(dataDir, { recursive: true, force: true });
process.exit(missed ? 1 : 0);
