import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';

// Spawns the real bin/schemasync (which runs dist/): run `npm run build` first.
const bin = join(import.meta.dirname, '..', '..', 'bin', 'schemasync');
let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'schemasync-init-'));
  dirs.push(d);
  return d;
};
const cli = (cwd: string, ...args: string[]) => {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

test('init writes a starter project that validates, with the editor modeline', () => {
  const dir = temp();
  const r = cli(dir, 'init', 'my-app');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('created my-app/schemasync.yaml\ncreated my-app/schema/contact.yaml\n');
  const config = readFileSync(join(dir, 'my-app/schemasync.yaml'), 'utf8');
  expect(config).toContain('source: my-app\n');
  expect(config).toContain('baseUrl: http://127.0.0.1:4400/v1\n');
  const starter = readFileSync(join(dir, 'my-app/schema/contact.yaml'), 'utf8');
  expect(starter.split('\n')[0]).toBe('# yaml-language-server: $schema=../node_modules/schemasync/schemas/declaration.schema.json');
  const v = cli(join(dir, 'my-app'), 'validate');
  expect(v.code).toBe(0);
  expect(v.stdout).toBe('✔ valid: 1 file, 1 object, 1 view\n');
});

test('init refuses to overwrite unless --force', () => {
  const dir = temp();
  writeFileSync(join(dir, 'schemasync.yaml'), 'source: mine\n');
  const r = cli(dir, 'init', '--source', 'crm');
  expect(r.code).toBe(1);
  expect(r.stderr).toBe('Error: schemasync.yaml already exists; nothing was written\n  hint: Pass --force to overwrite.\n');
  expect(readFileSync(join(dir, 'schemasync.yaml'), 'utf8')).toBe('source: mine\n');
  expect(existsSync(join(dir, 'schema'))).toBe(false);
  const forced = cli(dir, 'init', '--source', 'crm', '--force');
  expect(forced.code).toBe(0);
  expect(readFileSync(join(dir, 'schemasync.yaml'), 'utf8')).toContain('source: crm\n');
});

test('init refuses an invalid --source', () => {
  const r = cli(temp(), 'init', '--source', 'Bad Id');
  expect(r.code).toBe(1);
  expect(r.stderr.split('\n')[0]).toBe('Error: Invalid source id "Bad Id"');
});

test('the "Next" lines can be pasted: a folder with spaces is quoted', () => {
  const dir = temp();
  const r = cli(dir, 'init', "My Project's");
  expect(r.code).toBe(0);
  const cd = r.stdout.split('\n').find((l) => l.trimStart().startsWith('cd '));
  expect(cd).toBe(`  cd 'My Project'\\''s'`);
  // The line works in a real shell.
  const sh = spawnSync('sh', ['-c', `${cd!.trim()} && pwd`], { cwd: dir, encoding: 'utf8' });
  expect(sh.stdout.trim()).toBe(realpathSync(join(dir, "My Project's")));
  expect(cli(dir, 'init', 'plain-dir').stdout).toContain('\n  cd plain-dir\n');
});

test('both JSON Schemas the starter modelines name are exported by the package', () => {
  const require = createRequire(join(import.meta.dirname, '..', '..', 'package.json'));
  for (const name of ['declaration', 'project']) {
    const file = require.resolve(`schemasync/${name}.schema.json`);
    expect(file).toBe(join(import.meta.dirname, '..', '..', 'schemas', `${name}.schema.json`));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toHaveProperty('$schema');
  }
});
