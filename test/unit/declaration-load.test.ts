import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { MAX_FILE_BYTES, MAX_TOTAL_BYTES, loadDeclarationFiles, loadProject, loadProjectSync, sortDiagnostics, type LocatedDiagnostic } from '../../engine/declaration/load.js';

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

/** Write an inline file tree into a fresh temp dir and return the dir. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'schemasync-load-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const where = (d: LocatedDiagnostic, dir: string) => `${d.file.slice(dir.length + 1)}:${d.line}:${d.column}`;
const errorsAt = (r: { diagnostics: LocatedDiagnostic[] }, dir: string) =>
  r.diagnostics.filter((d) => d.severity === 'error').map((d) => `${where(d, dir)} ${d.code ?? ''} ${d.message}`.trim());

const project = (schema: Record<string, string>, config = 'source: crm\nschema: schema\n') =>
  tree({ 'schemasync.yaml': config, ...Object.fromEntries(Object.entries(schema).map(([k, v]) => [`schema/${k}`, v])) });

describe('positions', () => {
  test('each diagnostic points at the offending key or value', () => {
    const dir = project({
      'deal.yaml': [
        'objects:', //                                             1
        '  deal:', //                                              2
        '    attributes:', //                                      3
        '      title: { type: strng, requird: true }', //          4
        '      Amount:', //                                        5
        '        type: number', //                                 6
        '        min: 5', //                                       7
        '        max: 1', //                                       8
        '      stage: { type: select }', //                        9
        'views:', //                                               10
        '  open:', //                                              11
        '    object: deal', //                                     12
        '    columns: [title, amout]', //                          13
        '',
      ].join('\n'),
    });
    const r = loadProjectSync({ cwd: dir });
    expect(r.declaration).toBeUndefined();
    const lines = r.diagnostics.map((d) => `${where(d, dir)} ${d.code} ${d.suggestion ?? '-'}`);
    expect(lines).toEqual(
      expect.arrayContaining([
        'schema/deal.yaml:4:22 SCHEMA_VALIDATION_FAILED text',
        'schema/deal.yaml:4:29 SCHEMA_VALIDATION_FAILED required',
        'schema/deal.yaml:5:7 SCHEMA_INVALID_ATTRIBUTE_NAME amount',
        'schema/deal.yaml:8:14 SCHEMA_VALIDATION_FAILED -',
        'schema/deal.yaml:9:7 SCHEMA_VALIDATION_FAILED -',
        'schema/deal.yaml:13:22 SCHEMA_VALIDATION_FAILED Amount',
      ]),
    );
    expect(lines).toHaveLength(6);
  });

  test('all files are checked in one run; a duplicate object names both places', () => {
    const dir = project({
      'a.yaml': 'objects:\n  deal:\n    attributes:\n      x: { type: integr }\n',
      'b.yaml': '# second\nobjects:\n  deal:\n    attributes: {}\n  Person:\n    attributes: {}\n',
    });
    const r = loadProjectSync({ cwd: dir });
    expect(r.files.map((f) => f.path.slice(dir.length + 1))).toEqual(['schema/a.yaml', 'schema/b.yaml']);
    expect(errorsAt({ diagnostics: sortDiagnostics(r.diagnostics) }, dir)).toEqual([
      'schema/a.yaml:4:18 SCHEMA_VALIDATION_FAILED Attribute "x" of object "deal" has an unknown type "integr"',
      expect.stringMatching(/^schema\/b\.yaml:3:3 SCHEMA_DUPLICATE_OBJECT Object "deal" is declared twice: also at .*schema\/a\.yaml:2:3$/),
      expect.stringMatching(/^schema\/b\.yaml:5:3 SCHEMA_INVALID_OBJECT_NAME /),
    ]);
  });

  test('views and relations may refer to objects of other files', () => {
    const dir = project({
      'company.yaml': 'objects:\n  company:\n    attributes:\n      name: { type: text }\n',
      'deal.yaml': 'objects:\n  deal:\n    attributes:\n      company: { type: relation, target: company }\n      owner: { type: relation, target: user }\nviews:\n  by_name:\n    object: company\n    columns: [name]\n',
    });
    const r = loadProjectSync({ cwd: dir });
    expect(errorsAt(r, dir)).toEqual([]);
    expect(r.declaration?.objects['deal']?.attributes['company']?.target).toBe('company');
    expect(r.diagnostics.map((d) => `${where(d, dir)} ${d.severity}`)).toEqual(['schema/deal.yaml:5:40 warning']);
  });
});

describe('hostile and broken YAML', () => {
  test('a syntax error is a located diagnostic and other files are still checked', () => {
    const dir = project({
      'a.yaml': 'objects:\n  deal:\n    attributes:\n      x: { type: text\n',
      'b.yaml': 'objects:\n  b:\n    attributes:\n      y: { type: nope }\n',
    });
    const r = loadProjectSync({ cwd: dir });
    const lines = errorsAt(r, dir);
    expect(lines.some((l) => l.startsWith('schema/a.yaml:') && l.includes('YAML syntax error'))).toBe(true);
    expect(lines.some((l) => l.startsWith('schema/b.yaml:4:18'))).toBe(true);
  });

  test('duplicate keys are errors at the second key', () => {
    const dir = project({ 'a.yaml': 'objects:\n  deal:\n    attributes:\n      x: { type: text }\n      x: { type: number }\n' });
    expect(errorsAt(loadProjectSync({ cwd: dir }), dir)).toEqual([
      'schema/a.yaml:5:7 SCHEMA_VALIDATION_FAILED Key "x" appears twice in the same mapping: only this last one is read, the earlier one is ignored and not checked',
    ]);
  });

  test('with a duplicate key, every other diagnostic points at the copy that is read (the last)', () => {
    const dir = project({
      'a.yaml': [
        'objects:', //                                1
        '  deal:', //                                 2
        '    attributes:', //                         3
        '      x: { type: text }', //                 4
        '      x: { type: intgr }', //                5
        '  person:', //                               6
        '    attributes:', //                         7
        '      n: { type: nope1 }', //                8
        '  person:', //                               9
        '    attributes:', //                         10
        '      n: { type: text, maxLenght: 3 }', //   11
        '',
      ].join('\n'),
    });
    const r = loadProjectSync({ cwd: dir });
    expect(errorsAt({ diagnostics: sortDiagnostics(r.diagnostics) }, dir)).toEqual([
      expect.stringMatching(/^schema\/a\.yaml:5:7 SCHEMA_VALIDATION_FAILED Key "x" appears twice .*the earlier one is ignored and not checked$/),
      'schema/a.yaml:5:18 SCHEMA_VALIDATION_FAILED Attribute "x" of object "deal" has an unknown type "intgr"',
      expect.stringMatching(/^schema\/a\.yaml:9:3 SCHEMA_VALIDATION_FAILED Key "person" appears twice .*not checked$/),
      'schema/a.yaml:11:24 SCHEMA_VALIDATION_FAILED Attribute "n" of object "person" has an unknown field "maxLenght"',
    ]);
  });

  test('a file that cannot be read turns cross-file "not declared" into a warning naming it', () => {
    const dir = project({
      'a.yaml': 'objects:\n  company:\n    attributes:\n      name: { type: text\n',
      'b.yaml': 'objects:\n  deal:\n    attributes:\n      company: { type: relation, target: company }\nviews:\n  companies:\n    object: company\n    columns: [name]\n',
    });
    const r = loadProjectSync({ cwd: dir });
    const errs = errorsAt(r, dir);
    expect(errs.length).toBeGreaterThan(0);
    expect(errs.every((l) => l.startsWith('schema/a.yaml:'))).toBe(true);
    const warnings = r.diagnostics.filter((d) => d.severity === 'warning').map((d) => `${where(d, dir)} ${d.message}`);
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^schema\/b\.yaml:7:13 View "companies" lists object "company", which the files that could be read do not declare \(\S*schema\/a\.yaml could not be read and may declare it\)$/,
        ),
        expect.stringMatching(/^schema\/b\.yaml:4:42 .*points to object "company", which these files do not declare \(\S*schema\/a\.yaml could not be read and may declare it\): it must exist/),
      ]),
    );
    // With every file read, a view on an undeclared object stays an error.
    const clean = project({ 'b.yaml': 'objects:\n  deal:\n    attributes: {}\nviews:\n  companies:\n    object: company\n' });
    expect(errorsAt(loadProjectSync({ cwd: clean }), clean)).toEqual(['schema/b.yaml:6:13 SCHEMA_VALIDATION_FAILED View "companies" lists object "company", which is not declared']);
  });

  test('merge keys are refused with a clear message; plain aliases work', () => {
    const dir = project({ 'a.yaml': 'objects:\n  deal:\n    attributes:\n      x: &t { type: text }\n      y:\n        <<: *t\n        label: Y\n' });
    expect(errorsAt(loadProjectSync({ cwd: dir }), dir)).toEqual(['schema/a.yaml:6:9 SCHEMA_VALIDATION_FAILED YAML merge keys ("<<: *anchor") are not supported in declaration files']);
    const ok = project({ 'a.yaml': 'objects:\n  deal:\n    attributes:\n      x: &t { type: text }\n      y: *t\n' });
    expect(loadProjectSync({ cwd: ok }).declaration?.objects['deal']?.attributes['y']).toEqual({ type: 'text' });
  });

  test('several YAML documents in one file are refused in plain words', () => {
    const dir = project({ 'a.yaml': 'objects:\n  a:\n    attributes: {}\n---\nobjects:\n  b:\n    attributes: {}\n' });
    const lines = errorsAt(loadProjectSync({ cwd: dir }), dir);
    expect(lines).toEqual([expect.stringMatching(/^schema\/a\.yaml:\d+:\d+ SCHEMA_VALIDATION_FAILED A declaration file holds one YAML document; remove the `---` or split the file$/)]);
    expect(lines.join()).not.toMatch(/parseAllDocuments/);
  });

  test('an alias bomb is refused with a clear message', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      levels.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const dir = project({ 'bomb.yaml': `${levels.join('\n')}\n` });
    const r = loadProjectSync({ cwd: dir });
    const lines = errorsAt(r, dir);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^schema\/bomb\.yaml:2:\d+ SCHEMA_VALIDATION_FAILED Too many alias expansions/);
  });

  test('a file over the size cap is refused without being parsed', () => {
    const dir = project({ 'big.yaml': `# ${'x'.repeat(MAX_FILE_BYTES)}\n` });
    expect(errorsAt(loadProjectSync({ cwd: dir }), dir)).toEqual([
      expect.stringMatching(/^schema\/big\.yaml:1:1 SCHEMA_VALIDATION_FAILED File is 4\.0 MB; declaration files over 4 MB are refused$/),
    ]);
    expect(MAX_FILE_BYTES).toBeLessThanOrEqual(4 * 1024 * 1024);
  });

  test('files under the per-file cap but over the total cap are refused together, none parsed', async () => {
    // Each file is valid YAML just under 4 MB; nine of them pass 32 MB.
    const body = `objects:\n  o:\n    attributes: {}\n# ${'x'.repeat(MAX_FILE_BYTES - 1024)}\n`;
    const files = Object.fromEntries(Array.from({ length: Math.ceil(MAX_TOTAL_BYTES / body.length) + 1 }, (_, i) => [`f${i}.yaml`, body.replace('  o:', `  o${i}:`)]));
    const dir = project(files);
    for (const r of [loadProjectSync({ cwd: dir }), await loadProject({ cwd: dir })]) {
      const lines = errorsAt(r, dir);
      expect(lines).toEqual([expect.stringMatching(/^schema\/f\d+\.yaml:1:1 SCHEMA_VALIDATION_FAILED The \d+ declaration files total \d+\.\d MB; more than 32 MB in one project is refused, so none was read$/)]);
      expect(r.declaration).toBeUndefined();
      expect(r.files.every((f) => f.objects.length === 0)).toBe(true);
    }
  });

  test('deep nesting: moderate depth is fine, extreme depth is one clear error, not a crash', () => {
    const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const file = (n: number) => ({ 'deep.yaml': `objects:\n  deal:\n    attributes:\n      x: { type: json, default: ${nested(n)} }\n` });
    const ok = project(file(200));
    expect(errorsAt(loadProjectSync({ cwd: ok }), ok)).toEqual([]);
    const deep = project(file(20_000));
    expect(errorsAt(loadProjectSync({ cwd: deep }), deep)).toEqual([expect.stringMatching(/^schema\/deep\.yaml:4:\d+ SCHEMA_VALIDATION_FAILED The YAML nests too deeply to read$/)]);
  });

  test('an empty value is located at its key', () => {
    const dir = project({ 'a.yaml': 'objects:\n  deal:\n  person:\n    attributes: {}\n' });
    expect(errorsAt(loadProjectSync({ cwd: dir }), dir)).toEqual(['schema/a.yaml:2:3 SCHEMA_VALIDATION_FAILED Object "deal" must be a mapping of its fields']);
  });

  test('top-level typos are reported with the near miss', () => {
    const dir = project({ 'a.yaml': 'object:\n  deal:\n    attributes: {}\n' });
    const r = loadProjectSync({ cwd: dir });
    expect(r.diagnostics).toEqual([expect.objectContaining({ line: 1, column: 1, suggestion: 'objects' })]);
  });
});

describe('schemasync.yaml', () => {
  test('the project file is checked against its schema, located', () => {
    const dir = tree({ 'schemasync.yaml': 'source: Crm App\nschema: schema\nbaseUrl: localhost:4400\nsorce: x\n' });
    const lines = errorsAt(loadProjectSync({ cwd: dir }), dir);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^schemasync\.yaml:1:9 .*source "Crm App" is not a valid source id/),
        expect.stringMatching(/^schemasync\.yaml:3:10 .*baseUrl "localhost:4400" must start with http/),
        expect.stringMatching(/^schemasync\.yaml:4:1 .*unknown field "sorce"/),
      ]),
    );
  });

  test('a schema folder without files, and globs relative to the config file', () => {
    const empty = tree({ 'schemasync.yaml': 'source: crm\nschema: defs\n', 'defs/readme.txt': 'x' });
    expect(errorsAt(loadProjectSync({ cwd: empty }), empty)).toEqual([expect.stringMatching(/^schemasync\.yaml:2:9 .*holds no \.yaml or \.yml files/)]);
    const globbed = tree({
      'app/schemasync.yaml': 'source: crm\nschema: ["a/*.yaml", "b/**/*.yml"]\n',
      'app/a/x.yaml': 'objects:\n  x:\n    attributes: {}\n',
      'app/b/c/y.yml': 'objects:\n  y:\n    attributes: {}\n',
      'app/b/skip.yaml': 'objects:\n  z:\n    attributes: {}\n',
    });
    const r = loadProjectSync({ cwd: globbed, configPath: 'app/schemasync.yaml' });
    expect(r.diagnostics).toEqual([]);
    expect(Object.keys(r.declaration?.objects ?? {})).toEqual(['x', 'y']);
  });
});

test('loadDeclarationFiles works without a config', () => {
  const dir = tree({ 'one.yaml': 'objects:\n  one:\n    attributes:\n      size: { type: document, maxFileSize: 1MB }\n' });
  const r = loadDeclarationFiles([join(dir, 'one.yaml')]);
  expect(r.diagnostics).toEqual([]);
  expect(r.declaration?.objects['one']?.attributes['size']?.maxFileSize).toBe(1024 * 1024);
});
