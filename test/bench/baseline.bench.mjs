// Part of `npm run bench` (alone: `npm run bench -- baseline`; cases: BENCH_CASES=a,b):
// the store-redesign benchmarks (issue 14) against the commit before it, measured in the
// same run. The baseline is checked out into a temporary git worktree and built there; then
// each case runs in a fresh process on the baseline and on this tree in turn (A B A B …),
// so both see the same machine load. Prints both figures and the ratio; a loss of more
// than 10% against the first baseline fails loudly (exit 1).
//
// BENCH_BASELINE takes a comma-separated list to put several commits side by side (each
// round runs every tree once, in order: A B C now, A B C now, …); an entry that is a
// folder is used as an already built checkout instead (it is neither built nor removed).
// BENCH_ROUNDS sets the rounds (median reported); each round's figures and the load
// average are printed as they come, so a noisy round can be seen.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkTarget } from './target.mjs';

const BASELINES = (process.env.BENCH_BASELINE ?? 'af248ac').split(',').filter(Boolean);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MAX_LOSS = 0.1;
const CASES = ['create-http', 'create-vs-bare', 'bulk-http', 'search-100k', 'sync-1000', 'watch'];

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = (cmd, args, cwd) => {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status})`);
  return r.stdout;
};
const isDir = (p) => existsSync(p) && statSync(p).isDirectory();
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

const wanted = (process.env.BENCH_CASES ?? '').split(',').filter(Boolean);
const cases = wanted.length > 0 ? CASES.filter((c) => wanted.includes(c)) : CASES;
// This tree's dist/ is built by scripts/bench.mjs before any bench runs.
const base = mkdtempSync(join(tmpdir(), 'ss-baseline-'));
const created = [];
try {
  const trees = BASELINES.map((ref, i) => {
    if (isDir(ref)) return { label: ref.split('/').at(-1), dir: resolve(ref) };
    const dir = join(base, `tree-${i}`);
    run('git', ['worktree', 'add', '--detach', dir, ref], root);
    created.push(dir);
    // Same dependencies as this tree (the redesign adds none); the build is the baseline's own.
    if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], dir);
    run(process.execPath, ['scripts/build-validators.mjs'], dir);
    return { label: ref, dir };
  });
  trees.push({ label: 'now', dir: root });

  const script = join(root, 'test/bench/compare/cases.mjs');
  const measure = (checkout, name) => JSON.parse(run(process.execPath, ['--expose-gc', script, checkout, name], root).trim().split('\n').at(-1));
  const pick = (xs) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)];
  const rows = [];
  // A row per figure: the case's value, then any `also` figures it reports (same unit sense).
  const addRow = (name, unit, better, series, gate) => {
    const medians = series.map(pick);
    // ratio > 1 is better for the later tree, whatever the unit.
    const vsFirst = medians.map((m) => (better === 'higher' ? m / medians[0] : medians[0] / m));
    const ratio = vsFirst.at(-1);
    const loss = gate && ratio < 1 - MAX_LOSS;
    rows.push({ name, unit, medians, vsFirst, loss });
    console.log(`${name.padEnd(14)} ${trees.map((t, i) => `${t.label}: ${medians[i].toFixed(2)} ${unit}`).join('   ')}   ratio now/${trees[0].label} ${ratio.toFixed(2)}`);
    if (gate) checkTarget(`${name} against ${trees[0].label}`, !loss, `ratio ${ratio.toFixed(2)} (≥ ${(1 - MAX_LOSS).toFixed(2)})`);
  };
  console.log(`load average at start: ${load()}`);
  for (const name of cases) {
    const got = trees.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
      const line = trees.map((t, i) => {
        const m = measure(t.dir, name);
        got[i].push(m);
        return `${t.label} ${m.value.toFixed(2)}${m.detail ? ` (${m.detail})` : ''}`;
      });
      console.log(`  ${name} round ${r + 1}: ${line.join('   ')}   [load ${load()}]`);
    }
    const { unit, better, also = {} } = got[0][0];
    addRow(name, unit, better, got.map((ms) => ms.map((m) => m.value)), true);
    for (const label of Object.keys(also)) addRow(`${name} ${label}`, unit, better, got.map((ms) => ms.map((m) => m.also[label])), false);
  }
  console.log(`load average at end: ${load()}`);
  console.log(`\nmedians of ${ROUNDS} alternating rounds; ratio vs ${trees[0].label} (>1 = better)`);
  console.log(`| benchmark | ${trees.map((t) => t.label).join(' | ')} |\n|---|${trees.map(() => '---|').join('')}`);
  for (const r of rows) {
    const cells = r.medians.map((m, i) => `${m.toFixed(2)} ${r.unit}${i > 0 ? ` (${r.vsFirst[i].toFixed(2)})` : ''}`);
    console.log(`| ${r.name} | ${cells.join(' | ')}${r.loss ? ' ✗' : ''} |`);
  }
} finally {
  for (const dir of created) spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'inherit' });
  rmSync(base, { recursive: true, force: true });
}
