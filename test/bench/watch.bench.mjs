// Save-to-applied latency of `schemasync dev` (issue 6): 50 edits, each a file write →
// the change visible on GET /v1/schema/objects/:id, against one direct dry-run plan +
// push of the same kind of change through the SDK, measured in the same run on the same
// server. Targets: median < 150 ms, p95 < 300 ms.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SchemaClient } from '../../dist/engine/sdk/index.js';
import { startDev } from './dev-server.mjs';
import { checkTarget } from './target.mjs';

const EDITS = 50;
const POLL_MS = 2;
const root = new URL('../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'ss-watch-bench-'));
writeFileSync(join(dir, 'schemasync.yaml'), 'source: crm\nschema: schema\n');
mkdirSync(join(dir, 'schema'));
// A realistic project: the CRM example plus the object the edits go to.
for (const f of ['company.yaml', 'person.yaml', 'deal.yaml']) {
  writeFileSync(join(dir, 'schema', f), readFileSync(join(root, 'examples/crm/schema', f)));
}
const benchFile = join(dir, 'schema', 'bench.yaml');
const decl = (n) => {
  const attrs = { title: { type: 'text' } };
  for (let i = 1; i <= n; i++) attrs[`f${i}`] = { type: 'integer' };
  return { objects: { bench: { attributes: attrs } }, views: {} };
};
const yamlOf = (n) =>
  `objects:\n  bench:\n    attributes:\n      title: { type: text }\n${Array.from({ length: n }, (_, i) => `      f${i + 1}: { type: integer }\n`).join('')}`;
writeFileSync(benchFile, yamlOf(0));

const { sleep, waitOut, stop } = startDev(root, dir);

try {
  const baseUrl = (await waitOut(/server on (http:\/\/\S+\/v1)/))[1];
  await waitOut(/✓ synced crm/);
  const { apiKey } = JSON.parse(readFileSync(join(dir, '.schemasync', 'credentials.json'), 'utf8'));
  const has = async (object, attr) => {
    const res = await fetch(`${baseUrl}/schema/objects/${object}`, { headers: { authorization: `Bearer ${apiKey}` } });
    if (res.status !== 200) return false;
    const body = await res.json();
    return body.data.attributes.some((a) => a.name === attr);
  };

  const watchMs = [];
  for (let i = 1; i <= EDITS; i++) {
    const t0 = performance.now();
    writeFileSync(benchFile, yamlOf(i));
    while (!(await has('bench', `f${i}`))) await sleep(POLL_MS);
    watchMs.push(performance.now() - t0);
    await sleep(30); // let the run finish its log line before the next save
  }

  // Baseline: the same change made directly — dry-run plan, then push — on another source.
  const client = new SchemaClient({ baseUrl, apiKey, retries: 0 });
  await client.sources.push('direct', { objects: { direct: decl(0).objects.bench }, views: {} });
  const directMs = [];
  for (let i = 1; i <= EDITS; i++) {
    const d = { objects: { direct: decl(i).objects.bench }, views: {} };
    const t0 = performance.now();
    await client.sources.push('direct', d, { dryRun: true });
    await client.sources.push('direct', d);
    directMs.push(performance.now() - t0);
  }

  const q = (xs, p) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
  };
  const f = (ms) => `${ms.toFixed(1)} ms`;
  const wMed = q(watchMs, 50);
  const wP95 = q(watchMs, 95);
  const dMed = q(directMs, 50);
  const dP95 = q(directMs, 95);
  console.log(`edits: ${EDITS}, poll every ${POLL_MS} ms, debounce 75 ms (the default)`);
  console.log(`watch save→applied   median ${f(wMed)}  p95 ${f(wP95)}  (target < 150 / < 300)`);
  console.log(`direct plan+push     median ${f(dMed)}  p95 ${f(dP95)}`);
  console.log(`ratio watch/direct   median ${(wMed / dMed).toFixed(1)}×  (the debounce is most of the difference)`);
  checkTarget('dev save → applied, median', wMed < 150, `${f(wMed)} (< 150 ms)`);
  checkTarget('dev save → applied, p95', wP95 < 300, `${f(wP95)} (< 300 ms)`);
} finally {
  await stop();
  rmSync(dir, { recursive: true, force: true });
}
