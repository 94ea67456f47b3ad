// Validate a generated declaration of 1,000 objects × 50 attributes (20 files) and compare
// with plain `yaml.parse` of the same files in the same run (issue 2 target: within 2×),
// then time a whole `bin/schemasync validate` process on it (target: under 1.5 s).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { loadProject, loadProjectSync } from '../../dist/engine/declaration/load.js';
import { withPlainEnv } from '../../dist/engine/declaration/parse-file.js';
import { checkTarget } from './target.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OBJECTS = 1000;
const ATTRS = 50;
const FILES = 20;

const kinds = [
  (i) => `{ type: text, required: ${i % 7 === 0}, maxLength: ${100 + i} }`,
  (i) => `{ type: number, min: 0, max: ${1000 + i} }`,
  (i) => `{ type: integer, min: 0, default: ${i % 10} }`,
  () => `{ type: boolean, default: false }`,
  () => `{ type: date }`,
  () => `{ type: datetime }`,
  () => `{ type: email, unique: true }`,
  () => `{ type: url }`,
  () => `{ type: select, options: [lead, qualified, won, lost], default: lead }`,
  () => `{ type: multiselect, options: [a, b, c] }`,
  () => `{ type: json }`,
  (i, o) => `{ type: relation, target: obj_${(o + 1) % OBJECTS} }`,
  () => `{ type: document, accepts: [application/pdf, "image/*"], maxFileSize: 10MB, multiple: false }`,
];

const dir = mkdtempSync(join(tmpdir(), 'schemasync-bench-'));
mkdirSync(join(dir, 'schema'));
writeFileSync(join(dir, 'schemasync.yaml'), 'source: bench\nschema: schema\n');
const files = [];
for (let f = 0; f < FILES; f++) {
  const lines = ['objects:'];
  for (let o = f * (OBJECTS / FILES); o < (f + 1) * (OBJECTS / FILES); o++) {
    lines.push(`  obj_${o}:`, `    label: Object ${o}`, '    attributes:');
    for (let a = 0; a < ATTRS; a++) lines.push(`      attr_${a}: ${kinds[a % kinds.length](a, o)}`);
  }
  lines.push('views:', `  view_${f}:`, `    object: obj_${f * (OBJECTS / FILES)}`, '    filter: { attr_8: { in: [lead, won] } }', '    sort: [{ attribute: attr_1, direction: desc }]', '    columns: [attr_0, attr_1, attr_8]');
  const file = join(dir, 'schema', `part_${String(f).padStart(2, '0')}.yaml`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  files.push(file);
}

function time(fn, runs) {
  fn(); // warm-up (JIT, ajv compile)
  const times = [];
  for (let i = 0; i < runs; i++) {
    globalThis.gc?.();
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

// yaml's parser reads process.env.LOG_TOKENS once per token, a slow native lookup; the
// validate path parses with a plain copy of process.env (withPlainEnv). The baseline gets
// the same condition so the ratio compares parsing with parsing; the raw figure is printed too.
const RUNS = 7;
const parseAll = () => {
  for (const f of files) parse(readFileSync(f, 'utf8'));
};
const baseline = time(() => withPlainEnv(parseAll), RUNS);
const baselineRaw = time(parseAll, RUNS);
let result;
const ours = time(() => {
  result = loadProjectSync({ cwd: dir });
}, RUNS);
// What the CLI runs: the same load with files parsed on every core (worker threads).
await loadProject({ cwd: dir });
const parTimes = [];
for (let i = 0; i < RUNS; i++) {
  globalThis.gc?.();
  const t = performance.now();
  await loadProject({ cwd: dir });
  parTimes.push(performance.now() - t);
}
parTimes.sort((a, b) => a - b);
const parallel = parTimes[Math.floor(parTimes.length / 2)];
if (result.diagnostics.some((d) => d.severity === 'error')) {
  console.error(result.diagnostics.slice(0, 5));
  throw new Error('generated declaration should be valid');
}

const procTimes = [];
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  const r = spawnSync(process.execPath, [join(root, 'bin/schemasync'), 'validate'], { cwd: dir, encoding: 'utf8' });
  procTimes.push(performance.now() - t);
  if (r.status !== 0) throw new Error(`validate exited ${r.status}: ${r.stdout}${r.stderr}`);
}
procTimes.sort((a, b) => a - b);
const proc = procTimes[Math.floor(procTimes.length / 2)];
rmSync(dir, { recursive: true, force: true });

const ratio = ours / baseline;
console.log(`declaration: ${OBJECTS} objects × ${ATTRS} attributes in ${FILES} files`);
console.log(`yaml.parse (baseline)     ${baseline.toFixed(1)} ms (median of ${RUNS}; plain process.env, as validate parses)`);
console.log(`yaml.parse, real env     ${baselineRaw.toFixed(1)} ms (median of ${RUNS}; not used for the ratio)`);
console.log(`load + validate           ${ours.toFixed(1)} ms (median of ${RUNS})`);
console.log(`ratio                     ${ratio.toFixed(2)}×  (target ≤ 2×)`);
checkTarget('load + validate vs yaml.parse', ratio <= 2, `${ratio.toFixed(2)}× (≤ 2×)`);
console.log(`load + validate, parallel ${parallel.toFixed(1)} ms (median of ${RUNS}; ${(parallel / baseline).toFixed(2)}× yaml.parse)`);
console.log(`schemasync validate process ${proc.toFixed(0)} ms (median of 5; target < 1500 ms)`);
checkTarget('whole schemasync validate process', proc < 1500, `${proc.toFixed(0)} ms (< 1500 ms)`);
