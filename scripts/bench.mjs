#!/usr/bin/env node
// `npm run bench [-- name…]`: builds, then runs every test/bench/*.bench.mjs (or the
// named ones) one after another in its own process, so each measures on a quiet machine.
// Each bench measures its baseline in the same run and prints the ratio, and checks its
// targets through test/bench/target.mjs. A missed target is loud (issue 13): the misses are
// summed up at the end and the run exits 1, as it does when a bench fails outright.
// SCHEMASYNC_BENCH_DIR runs the benches of another folder (the runner's own test does).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = process.env.SCHEMASYNC_BENCH_DIR ? resolve(process.env.SCHEMASYNC_BENCH_DIR) : join(root, 'test', 'bench');
if (!process.env.SCHEMASYNC_BENCH_DIR) {
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
const work = mkdtempSync(join(tmpdir(), 'schemasync-bench-'));
const missesFile = join(work, 'misses.ndjson');
const crashed = [];
try {
  for (const f of files) {
    process.stdout.write(`\n== ${f}\n`);
    const r = spawnSync(process.execPath, ['--expose-gc', join(dir, f)], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, SCHEMASYNC_BENCH_MISSES: missesFile },
    });
    if (r.status !== 0) crashed.push({ bench: f, status: r.status ?? r.signal });
  }
  const misses = existsSync(missesFile)
    ? readFileSync(missesFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    : [];
  // A bench that only missed targets exits 1 as well: report it once, as its misses.
  const failed = crashed.filter((c) => !misses.some((m) => m.bench === c.bench));
  process.stdout.write('\n== summary\n');
  if (misses.length === 0 && failed.length === 0) {
    process.stdout.write(`every target met (${files.length} benchmark${files.length === 1 ? '' : 's'})\n`);
  } else {
    if (misses.length > 0) {
      process.stdout.write(`MISSED ${misses.length} target${misses.length === 1 ? '' : 's'}:\n`);
      for (const m of misses) process.stdout.write(`  ✗ ${m.bench}: ${m.label}: ${m.detail}\n`);
    }
    for (const c of failed) process.stdout.write(`  ✗ ${c.bench} failed (exit ${c.status}) before checking its targets\n`);
  }
  process.exitCode = misses.length > 0 || failed.length > 0 ? 1 : 0;
} finally {
  rmSync(work, { recursive: true, force: true });
}
