import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, expect, it } from 'vitest';

/**
 * `npm run bench` must be loud about a missed target (issue 13): the real runner
 * (scripts/bench.mjs) over a folder of tiny benches that use the real target check.
 */
const root = join(import.meta.dirname, '..', '..');
const check = pathToFileURL(join(root, 'test', 'bench', 'target.mjs')).href;
const dir = mkdtempSync(join(tmpdir(), 'ss-benches-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bench = (name: string, body: string) => writeFileSync(join(dir, `${name}.bench.mjs`), `import { checkTarget } from '${check}';\n${body}\n`);
const runner = (...names: string[]) =>
  spawnSync(process.execPath, [join(root, 'scripts', 'bench.mjs'), ...names], { cwd: root, encoding: 'utf8', env: { ...process.env, SCHEMASYNC_BENCH_DIR: dir } });

bench('fast', `checkTarget('fast thing', 5 < 10, '5 ms (< 10 ms)');`);
bench('slow', `checkTarget('slow thing', 50 < 10, '50 ms (< 10 ms)');\ncheckTarget('other thing', true, 'fine');`);
bench('broken', `throw new Error('boom');`);

it('every target met: exit 0 and a summary saying so', () => {
  const r = runner('fast');
  expect(r.status).toBe(0);
  expect(r.stdout).toContain('target met: fast thing: 5 ms (< 10 ms)');
  expect(r.stdout).toMatch(/== summary\nevery target met \(1 benchmark\)\n$/);
});

it('a missed target: exit 1 and the misses listed at the end', () => {
  const r = runner('fast', 'slow');
  expect(r.status).toBe(1);
  expect(r.stdout).toContain('TARGET MISSED: slow thing: 50 ms (< 10 ms)');
  expect(r.stdout).toMatch(/== summary\nMISSED 1 target:\n {2}✗ slow\.bench\.mjs: slow thing: 50 ms \(< 10 ms\)\n$/);
});

it('a bench that crashes fails the run too', () => {
  const r = runner('broken', 'fast');
  expect(r.status).toBe(1);
  expect(r.stdout).toContain('✗ broken.bench.mjs failed (exit 1) before checking its targets');
});
