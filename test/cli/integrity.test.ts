import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';

// Issue 21: declarations that loop or would reach a prototype are refused by every command
// that reads them, at file:line:column, before anything is sent. Spawns the real bin/schemasync
// (which runs dist/): run `npm run build` first.
const bin = join(import.meta.dirname, '..', '..', 'bin', 'schemasync');
let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function project(schema: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'schemasync-integrity-cli-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries({ 'schemasync.yaml': 'source: crm\nschema: schema\n', 'schema/deal.yaml': schema })) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

function cli(cwd: string, ...args: string[]) {
  // An address nothing listens on: the declaration must be refused before any request.
  const env = { ...process.env, NO_COLOR: '1', SCHEMASYNC_BASE_URL: 'http://127.0.0.1:9/v1', SCHEMASYNC_API_KEY: 'ssk_0000000000000000_x' };
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env });
  return { code: r.status, out: r.stdout + r.stderr };
}

const CYCLIC = ['objects:', '  deal:', '    attributes:', '      a: &a { type: json, default: [*a] }', ''].join('\n');
const PROTO = ['objects:', '  __proto__:', '    attributes:', '      x: { type: text }', '  deal:', '    attributes:', '      meta: { type: json, default: { __proto__: { p: 1 } } }', ''].join('\n');

describe('validate, plan and sync refuse looping and prototype-reaching declarations', () => {
  test.each(['validate', 'plan', 'sync'])('%s: a self-referencing alias, at the alias, no "circular structure"', (command) => {
    const r = cli(project(CYCLIC), command, ...(command === 'sync' ? ['--yes'] : []));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/schema\/deal\.yaml:4:37 .*The alias \*a is inside the value its anchor &a names/);
    expect(r.out).not.toMatch(/circular/i);
  });

  test.each(['validate', 'plan'])('%s: __proto__ as an object name and inside a json default, each at its line', (command) => {
    const r = cli(project(PROTO), command);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/schema\/deal\.yaml:2:3 .*SCHEMA_INVALID_OBJECT_NAME/);
    expect(r.out).toMatch(/schema\/deal\.yaml:7:\d+ .*"__proto__"/);
    expect(r.out).not.toMatch(/valid: \d+ objects?/);
  });
});
