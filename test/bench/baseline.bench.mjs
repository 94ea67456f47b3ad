// Part of `npm run bench` (alone: `npm run bench -- baseline`; cases: BENCH_CASES=a,b):
// the store-redesign benchmarks (issue 14) against the commit before it, measured in the
// same run. The baseline is checked out into a temporary
// git worktree and built there; then each case runs in a fresh process on the baseline and
// on this tree in turn (A B A B …), so both see the same machine load. Prints both figures
// and the ratio; a loss of more than 10% fails loudly (exit 1).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkTarget } from './target.mjs';

const BASELINE = process.env.BENCH_BASELINE ?? 'af248ac';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MAX_LOSS = 0.1;
const CASES = ['create-http', 'bulk-http', 'search-100k', 'sync-1000', 'watch'];

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = (cmd, args, cwd) => {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status})`);
  return r.stdout;
};

const wanted = (process.env.BENCH_CASES ?? '').split(',').filter(Boolean);
const cases = wanted.length > 0 ? CASES.filter((c) => wanted.includes(c)) : CASES;
// This tree's dist/ is built by scripts/bench.mjs before any bench runs.
const base = mkdtempSync(join(tmpdir(), 'ss-baseline-'));
const worktree = join(base, 'tree');
try {
  run('git', ['worktree', 'add', '--detach', worktree, BASELINE], root);
  // Same dependencies as this tree (the redesign adds none); the build is the baseline's own.
  if (!existsSync(join(worktree, 'node_modules'))) symlinkSync(join(root, 'node_modules'), join(worktree, 'node_modules'), 'dir');
  run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], worktree);
  run(process.execPath, ['scripts/build-validators.mjs'], worktree);

  const script = join(root, 'test/bench/compare/cases.mjs');
  const measure = (checkout, name) => JSON.parse(run(process.execPath, ['--expose-gc', script, checkout, name], root).trim().split('\n').at(-1));
  const rows = [];
  for (const name of cases) {
    const a = [];
    const b = [];
    for (let r = 0; r < ROUNDS; r++) {
      a.push(measure(worktree, name));
      b.push(measure(root, name));
    }
    const { unit, better } = b[0];
    const pick = (xs) => xs.map((x) => x.value).sort((p, q) => p - q)[Math.floor(xs.length / 2)];
    const before = pick(a);
    const after = pick(b);
    // ratio > 1 is better for the new tree, whatever the unit.
    const ratio = better === 'higher' ? after / before : before / after;
    const loss = ratio < 1 - MAX_LOSS;
    rows.push({ name, unit, before, after, ratio, loss });
    console.log(`${name.padEnd(12)} ${BASELINE}: ${before.toFixed(1)} ${unit}   now: ${after.toFixed(1)} ${unit}   ratio ${ratio.toFixed(2)}`);
    checkTarget(`${name} against ${BASELINE}`, !loss, `ratio ${ratio.toFixed(2)} (≥ ${(1 - MAX_LOSS).toFixed(2)})`);
  }
  console.log('\n| benchmark | before | after | ratio (>1 = faster) |\n|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.name} | ${r.before.toFixed(1)} ${r.unit} | ${r.after.toFixed(1)} ${r.unit} | ${r.ratio.toFixed(2)}${r.loss ? ' ✗' : ''} |`);
} finally {
  spawnSync('git', ['worktree', 'remove', '--force', worktree], { cwd: root, stdio: 'inherit' });
  rmSync(base, { recursive: true, force: true });
}
