import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { loadDeclarationFiles, type LocatedDiagnostic } from '../../engine/declaration/load.js';

// Issue 21: YAML that could reach a prototype, loop through an alias, or hold a string the
// service cannot store is refused at file:line:column, in words, before any plan or push.
let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function load(lines: string[]): { result: ReturnType<typeof loadDeclarationFiles>; errors: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'schemasync-integrity-'));
  dirs.push(dir);
  const file = join(dir, 'schema.yaml');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const result = loadDeclarationFiles([file]);
  const errors = result.diagnostics
    .filter((d: LocatedDiagnostic) => d.severity === 'error')
    .map((d) => `${d.line}:${d.column} ${d.code ?? ''} ${d.message}`);
  return { result, errors };
}

describe('prototype keys in declarations', () => {
  test('an object named __proto__ is reported by the name rule and hides nothing', () => {
    const { result, errors } = load([
      'objects:', //                                 1
      '  __proto__:', //                             2
      '    attributes:', //                          3
      '      title: { type: text }', //              4
      '  deal:', //                                  5
      '    attributes:', //                          6
      '      title: { type: text }', //              7
    ]);
    expect(result.declaration).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^2:3 SCHEMA_INVALID_OBJECT_NAME Object name "__proto__" is malformed/);
    expect(result.files[0]!.objects).toEqual(['__proto__', 'deal']);
  });

  test('an attribute or view named __proto__ is reported where it stands', () => {
    const { errors } = load([
      'objects:', //                                 1
      '  deal:', //                                  2
      '    attributes:', //                          3
      '      __proto__: { type: text }', //          4
      'views:', //                                   5
      '  __proto__: { object: deal }', //            6
    ]);
    expect(errors).toEqual([
      expect.stringMatching(/^4:7 SCHEMA_INVALID_ATTRIBUTE_NAME Attribute name "__proto__" is malformed/),
      expect.stringMatching(/^6:3 SCHEMA_VALIDATION_FAILED View name "__proto__" is malformed/),
    ]);
  });

  test('a __proto__ key inside a json default is invalid at its line', () => {
    const { result, errors } = load([
      'objects:', //                                        1
      '  deal:', //                                         2
      '    attributes:', //                                 3
      '      meta:', //                                     4
      '        type: json', //                              5
      '        default:', //                                6
      '          ok: 1', //                                 7
      '          __proto__: { polluted: true }', //         8
    ]);
    expect(result.declaration).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^8:\d+ SCHEMA_VALIDATION_FAILED .*"__proto__".* prototype/);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  test('an object named constructor is an ordinary name, and an undeclared one is not found on a prototype', () => {
    const { result, errors } = load([
      'objects:',
      '  deal:',
      '    attributes:',
      '      owner: { type: relation, target: constructor }',
    ]);
    // Not declared here (it may exist on the instance): a warning, found by name, not on a prototype.
    expect(errors).toEqual([]);
    expect(result.diagnostics.map((d) => d.message).join('\n')).toMatch(/object "constructor", which these files do not declare/);
    const ok = load(['objects:', '  constructor:', '    attributes:', '      name: { type: text }', '  deal:', '    attributes:', '      owner: { type: relation, target: constructor }']);
    expect(ok.errors).toEqual([]);
    expect(Object.keys(ok.result.declaration!.objects)).toEqual(['constructor', 'deal']);
  });
});

describe('aliases that loop', () => {
  test('a self-referencing alias is refused at the alias, in words', () => {
    const { result, errors } = load([
      'objects:', //                                                   1
      '  deal:', //                                                    2
      '    attributes:', //                                            3
      '      a: &a { type: json, default: [*a] }', //                  4
    ]);
    expect(result.declaration).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^4:37 SCHEMA_VALIDATION_FAILED The alias \*a is inside the value its anchor &a names/);
  });

  test('a loop through a nested anchor is refused too; a plain alias is fine', () => {
    const loop = load(['objects:', '  deal:', '    attributes:', '      a:', '        type: json', '        default: &top', '          list: [1, { back: *top }]']);
    expect(loop.errors).toEqual([expect.stringMatching(/^7:\d+ SCHEMA_VALIDATION_FAILED The alias \*top/)]);
    const plain = load(['objects:', '  deal:', '    attributes:', '      a: &field { type: text }', '      b: *field']);
    expect(plain.errors).toEqual([]);
  });
});

describe('strings the service could not store as written', () => {
  test('an unpaired surrogate in a label, an option or a default is refused at its position', () => {
    const { result, errors } = load([
      'objects:', //                                                     1
      '  deal:', //                                                      2
      '    label: "Deal \\ud800"', //                                   3
      '    attributes:', //                                              4
      '      stage: { type: select, options: [won, "lost\\udc00"] }', //  5
      '      note: { type: text, default: "x\\ud83d" }', //              6
    ]);
    expect(result.declaration).toBeUndefined();
    expect(errors.sort()).toEqual([
      expect.stringMatching(/^3:12 SCHEMA_VALIDATION_FAILED Object "deal": label must be well-formed Unicode/),
      expect.stringMatching(/^5:45 SCHEMA_VALIDATION_FAILED Attribute "stage" of object "deal": options\[1\] must be well-formed Unicode/),
      expect.stringMatching(/^6:36 SCHEMA_VALIDATION_FAILED Attribute "note" of object "deal": default "x\\ud83d" must be well-formed Unicode/),
    ]);
  });

  test('an unpaired surrogate in a name gets the name rule; a well-formed astral label passes', () => {
    const { errors } = load(['objects:', '  "deal\\ud800":', '    attributes: {}', '  ok:', '    label: "😀 𝄞"', '    attributes: {}']);
    expect(errors).toEqual([expect.stringMatching(/^2:3 SCHEMA_INVALID_OBJECT_NAME/)]);
  });
});
