#!/usr/bin/env node
// `node scripts/check-consumer-install.mjs`: what a user gets. Packs this checkout (built
// dist/) with `npm pack`, installs the tarball into a fresh project in a temp folder with
// `npm install <tarball>` (a consumer: this repo's lock and overrides play no part), and
// fails when npm warns about an engine (EBADENGINE) or the installed CLI does not run.
// Needs the npm registry. `--keep` leaves the temp folder for a look.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'schemasync-consumer-'));
const run = (cmd, args, cwd) => {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
};
let failed = false;
try {
  const pack = run('npm', ['pack', '--ignore-scripts', '--pack-destination', work], root);
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.out}`);
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  const project = join(work, 'consumer');
  spawnSync('mkdir', [project]);
  writeFileSync(join(project, 'package.json'), '{ "name": "consumer", "version": "1.0.0", "private": true }\n');
  // --ignore-scripts: better-sqlite3's native build is not what this checks; engines are
  // checked by npm while it resolves the tree, scripts or not.
  const install = run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', join(work, tarball)], project);
  process.stdout.write(`$ node --version\n${process.version}\n$ npm install ${tarball}\n${install.out}`);
  if (install.status !== 0) failed = true;
  const engine = install.out.split('\n').filter((l) => /EBADENGINE/.test(l));
  if (engine.length > 0) {
    process.stdout.write(`\nFAILED: the install warned about engines:\n${engine.join('\n')}\n`);
    failed = true;
  }
  const version = run(process.execPath, [join(project, 'node_modules', '.bin', 'schemasync'), '--version'], project);
  process.stdout.write(`$ node_modules/.bin/schemasync --version\n${version.out}`);
  if (version.status !== 0) failed = true;
  const tree = run('npm', ['ls', 'light-my-request', 'cookie'], project);
  process.stdout.write(`$ npm ls light-my-request cookie\n${tree.out}`);
  process.stdout.write(failed ? '\nconsumer install: FAILED\n' : '\nconsumer install: OK (no engine warning)\n');
} finally {
  if (!process.argv.includes('--keep')) rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
