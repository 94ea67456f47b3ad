import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';

// Spawns the real bin/schemasync (which runs dist/): run `npm run build` first.
const bin = join(import.meta.dirname, '..', '..', 'bin', 'schemasync');
let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'schemasync-validate-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

function cli(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const CONFIG = 'source: crm\nschema: schema\n';
const BROKEN = {
  'schemasync.yaml': CONFIG,
  'schema/deal.yaml': [
    'objects:',
    '  deal:',
    '    attributes:',
    '      title: { type: strng, requird: true }',
    '      Amount: { type: number }',
    '      company: { type: relation, target: company }',
    '',
  ].join('\n'),
  'schema/person.yaml': 'objects:\n  person:\n    attributes:\n      role: { type: select }\n',
};

describe('schemasync validate', () => {
  test('a clean project exits 0 with a summary', () => {
    const dir = tree({ 'schemasync.yaml': CONFIG, 'schema/a.yaml': 'objects:\n  a:\n    attributes:\n      n: { type: text }\n' });
    const r = cli(dir, 'validate');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('✔ valid: 1 file, 1 object, 0 views\n');
  });

  test('text: every error of every file, located, with near misses; warnings listed; exit 1', () => {
    const r = cli(tree(BROKEN), 'validate');
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n').filter((l) => !l.startsWith('  '));
    expect(lines).toEqual([
      'schema/deal.yaml:4:22 error SCHEMA_VALIDATION_FAILED Attribute "title" of object "deal" has an unknown type "strng" (did you mean "text"?)',
      'schema/deal.yaml:4:29 error SCHEMA_VALIDATION_FAILED Attribute "title" of object "deal" has an unknown field "requird" (did you mean "required"?)',
      'schema/deal.yaml:5:7 error SCHEMA_INVALID_ATTRIBUTE_NAME Attribute name "Amount" is malformed: use lowercase letters, digits and underscores, starting with a letter, at most 63 characters. (did you mean "amount"?)',
      'schema/deal.yaml:6:42 warning Attribute "company" of object "deal" points to object "company", which these files do not declare: it must exist on the instance (plan checks it)',
      'schema/person.yaml:4:7 error SCHEMA_VALIDATION_FAILED Attribute "role" of object "person" is a select and needs "options", the list of allowed values',
      '✖ 4 errors, 1 warning (2 files, 2 objects, 0 views)',
    ]);
  });

  test('warnings alone do not fail', () => {
    const dir = tree({ 'schemasync.yaml': CONFIG, 'schema/a.yaml': 'objects:\n  a:\n    attributes:\n      r: { type: relation, target: user }\n' });
    const r = cli(dir, 'validate');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('warning');
  });

  test('json: one JSON document with every diagnostic', () => {
    const r = cli(tree(BROKEN), 'validate', '--format', 'json');
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as { valid: boolean; errors: number; warnings: number; diagnostics: { file: string; line: number; column: number; code?: string; suggestion?: string }[] };
    expect(doc).toMatchObject({ valid: false, errors: 4, warnings: 1, files: 2 });
    expect(doc.diagnostics[0]).toMatchObject({ file: 'schema/deal.yaml', line: 4, column: 22, code: 'SCHEMA_VALIDATION_FAILED', suggestion: 'text', severity: 'error' });
    expect(JSON.parse(cli(tree(BROKEN), '--json', 'validate').stdout)).toMatchObject({ errors: 4 });
  });

  test('github: workflow annotations', () => {
    const r = cli(tree(BROKEN), 'validate', '--format', 'github');
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[2]).toBe(
      '::error file=schema/deal.yaml,line=5,col=7,title=SCHEMA_INVALID_ATTRIBUTE_NAME::Attribute name "Amount" is malformed: use lowercase letters, digits and underscores, starting with a letter, at most 63 characters. (did you mean "amount"?)',
    );
    expect(lines[3]).toMatch(/^::warning file=schema\/deal\.yaml,line=6,col=42::/);
  });

  test('--config points at a project elsewhere; paths are shown from the working directory', () => {
    const dir = tree({ 'proj/schemasync.yaml': CONFIG, 'proj/schema/a.yaml': 'objects:\n  a:\n    attributes:\n      n: { type: txt }\n' });
    const r = cli(dir, 'validate', '--config', 'proj/schemasync.yaml');
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')[0]).toBe('proj/schema/a.yaml:4:18 error SCHEMA_VALIDATION_FAILED Attribute "n" of object "a" has an unknown type "txt" (did you mean "text"?)');
  });

  test('no project file: a clear line on stderr, exit 1', () => {
    const r = cli(tree({}), 'validate');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('Error: No project file at schemasync.yaml\n  hint: Run `schemasync init` to create one, or pass --config <file>.\n');
  });

  test('YAML syntax errors and duplicate keys are located; the other files are still checked', () => {
    const dir = tree({
      'schemasync.yaml': CONFIG,
      'schema/a.yaml': 'objects:\n  a:\n    attributes:\n      n: { type: text }\n      n: { type: number }\n',
      'schema/b.yaml': 'objects:\n  b:\n  attributes: [\n',
      'schema/c.yaml': 'objects:\n  c:\n    attributes:\n      x: { type: bool }\n',
    });
    const r = cli(dir, 'validate');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('schema/a.yaml:5:7 error SCHEMA_VALIDATION_FAILED Key "n" appears twice in the same mapping');
    expect(r.stdout).toMatch(/^schema\/b\.yaml:\d+:\d+ error SCHEMA_VALIDATION_FAILED YAML syntax error/m);
    expect(r.stdout).toContain('schema/c.yaml:4:18 error SCHEMA_VALIDATION_FAILED Attribute "x" of object "c" has an unknown type "bool" (did you mean "boolean"?)');
  });

  test('a file that fails to parse does not cause false "not declared" errors in the others', () => {
    const dir = tree({
      'schemasync.yaml': CONFIG,
      'schema/a.yaml': 'objects:\n  company:\n    attributes:\n      name: { type: text\n',
      'schema/b.yaml': 'views:\n  companies:\n    object: company\n    columns: [name]\n',
    });
    const r = cli(dir, 'validate');
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n').filter((l) => !l.startsWith('  '));
    expect(lines.filter((l) => / error /.test(l)).every((l) => l.startsWith('schema/a.yaml:'))).toBe(true);
    expect(lines).toContain(
      'schema/b.yaml:3:13 warning View "companies" lists object "company", which the files that could be read do not declare (schema/a.yaml could not be read and may declare it)',
    );
    expect(r.stdout).not.toMatch(/is not declared/);
  });

  test('several documents in one file: a plain sentence, not a yaml API hint', () => {
    const dir = tree({ 'schemasync.yaml': CONFIG, 'schema/a.yaml': 'objects: {}\n---\nviews: {}\n' });
    const r = cli(dir, 'validate');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^schema\/a\.yaml:\d+:\d+ error SCHEMA_VALIDATION_FAILED A declaration file holds one YAML document; remove the `---` or split the file$/m);
  });

  test('an alias bomb is refused with a clear message', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++) {
      levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    }
    const r = cli(tree({ 'schemasync.yaml': CONFIG, 'schema/bomb.yaml': `${levels.join('\n')}\n` }), 'validate');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^schema\/bomb\.yaml:2:\d+ error SCHEMA_VALIDATION_FAILED Too many alias expansions \(more than 100\): refusing a file that expands exponentially$/m);
  });

  test('a large project (parsed on several threads) still locates every error in every file', () => {
    const files: Record<string, string> = { 'schemasync.yaml': CONFIG };
    for (let f = 0; f < 3; f++) {
      const lines = ['objects:'];
      for (let o = 0; o < 120; o++) {
        lines.push(`  o${f}_${o}:`, '    attributes:');
        for (let a = 0; a < 40; a++) lines.push(`      a_${a}: { type: select, options: [lead, qualified, won, lost], default: lead }`);
      }
      // One error near the end of each file, on a line we can compute.
      lines.push(`  last_${f}:`, '    attributes:', '      x: { type: integr }');
      files[`schema/part${f}.yaml`] = `${lines.join('\n')}\n`;
    }
    const errorLine = 1 + 120 * 42 + 3;
    const r = cli(tree(files), 'validate', '--format', 'json');
    const doc = JSON.parse(r.stdout) as { errors: number; diagnostics: { file: string; line: number; column: number; suggestion?: string }[] };
    expect(r.code).toBe(1);
    expect(doc.errors).toBe(3);
    expect(doc.diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.suggestion}`)).toEqual(
      [0, 1, 2].map((f) => `schema/part${f}.yaml:${errorLine}:18 integer`),
    );
  });

  test('the shipped example validates', () => {
    const r = cli(join(import.meta.dirname, '..', '..'), 'validate', '--config', 'examples/crm/schemasync.yaml');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('✔ valid: 3 files, 3 objects, 4 views\n');
  });
});
