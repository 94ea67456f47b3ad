import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';

// Spawns the real bin/schemasync (which runs dist/): run `npm run build` first.
const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'schemasync');
const cli = (...args: string[]) => {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

/** Every command of the external contract (contract.md §4). */
const CONTRACT_COMMANDS = ['init', 'validate', 'plan', 'sync', 'watch', 'pull', 'serve', 'dev', 'records', 'keys', 'roles', 'views', 'files', 'mcp'];

test('--help lists every contract command, each on its own line with a description', () => {
  const r = cli('--help');
  expect(r.code).toBe(0);
  const listed = new Map<string, string>();
  const section = r.stdout.split(/^Commands:$/m)[1] ?? '';
  for (const m of section.matchAll(/^ {2}([a-z]+)\b(.*)$/gm)) listed.set(m[1]!, m[2]!.trim());
  for (const name of CONTRACT_COMMANDS) {
    expect(listed.has(name), `"${name}" missing from --help`).toBe(true);
    expect(listed.get(name), `"${name}" has no description`).toMatch(/[a-z]{3,}/);
  }
  expect(cli('help').stdout).toBe(r.stdout);
});

test('--version and -v print the package version', () => {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-v']) {
    const r = cli(flag);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${version}\n`);
  }
});
