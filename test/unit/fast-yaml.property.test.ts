import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDocument, stringify } from 'yaml';
import { plainYamlValue } from '../../engine/declaration/fast-yaml.js';
import { checkProperty, randomSeed } from '../support/property.js';

/**
 * plainYamlValue (engine/declaration/fast-yaml.ts) reads plain declaration files with js-yaml,
 * and yaml stays the parser of record. The rule it must keep: whatever text it answers for,
 * yaml — with the options declaration files are parsed with — reads with no error and no
 * warning, to the same value (NaN, -0, key order and all). Held on declarations written out
 * by yaml in its styles, on YAML typed by hand in the flow style declarations use with tricky
 * scalars, and on random strings of YAML's significant characters; the first two must also
 * mostly take the fast path, or the property would hold by declining everything. Each of
 * those also with CRLF line ends, which the fast path reads as it reads LF.
 */
const OPTIONS = { prettyErrors: false, uniqueKeys: true, strict: true } as const;

function agreesWithYaml(text: string): boolean {
  const fast = plainYamlValue(text);
  if (!fast) return false;
  const doc = parseDocument(text, OPTIONS);
  expect(doc.errors.map((e) => e.message), text).toEqual([]);
  expect(doc.warnings.map((e) => e.message), text).toEqual([]);
  expect(fast.value, text).toStrictEqual(doc.toJS());
  return true;
}

/** Plain scalars as yaml's core schema reads them, and text that looks like one of them. */
const TRICKY = [
  '0', '-0', '+12', '012', '0o17', '0o19', '0x1F', '0xg', '1_000', '1e3', '1E-2', '.5', '5.', '-.5', '1.50', '.inf', '-.Inf', '+.INF', '.nan', '.NaN', 'nan', 'inf',
  '99999999999999999999', 'true', 'True', 'TRUE', 'tRUE', 'yes', 'no', 'on', 'off', 'y', 'n', 'null', 'Null', 'NULL', 'nUll', '~', '2024-01-31', '2024-01-31T10:00:00Z',
  '12:30', '1:2', 'a: b', 'a:b', 'a #b', 'a#b', '- x', '-x', 'x-', 'image/*', 'R&D', 'Hello!', 'a, b', 'a]', '[a', '{a', 'a}', 'x,y', '@x', '`x', 'é', '日本', ' ', '',
];
const scalar = fc.oneof(fc.constantFrom(...TRICKY), fc.string({ maxLength: 6 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof({ maxDepth: 3 }, scalar, fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(fc.oneof(fc.constantFrom('type', 'min', 'max', 'options', '1', 'true', 'a b', 'é'), fc.string({ maxLength: 4 })), tie('node'), { maxKeys: 3 })),
})).node;
const STYLES = [{}, { flowCollectionPadding: false }, { defaultStringType: 'QUOTE_DOUBLE' }, { defaultStringType: 'QUOTE_SINGLE' }, { collectionStyle: 'flow' }] as const;
const written = fc.tuple(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), value, { minKeys: 1, maxKeys: 4 }), fc.constantFrom(...STYLES)).map(([v, style]) => stringify(v, style));

/** A declaration as people type it: block mappings, flow mappings and lists inline, plain scalars from TRICKY. */
const plainToken = fc.constantFrom(...TRICKY.filter((t) => /^[^\s:,[\]{}#@`&!*|>?]+$/.test(t)));
const flowValue = fc.oneof(plainToken, fc.array(plainToken, { minLength: 1, maxLength: 3 }).map((xs) => `[${xs.join(', ')}]`));
const inline = fc.uniqueArray(fc.tuple(fc.constantFrom('type', 'min', 'max', 'default', 'options', 'required'), flowValue), { minLength: 1, maxLength: 3, selector: ([k]) => k }).map((kv) => `{ ${kv.map(([k, v]) => `${k}: ${v}`).join(', ')} }`);
const typed = fc
  .uniqueArray(fc.tuple(fc.constantFrom('deal', 'company', 'obj_1'), fc.uniqueArray(fc.tuple(fc.constantFrom('title', 'amount', 'stage', 'due'), fc.oneof(inline, plainToken)), { minLength: 1, maxLength: 4, selector: ([k]) => k })), { minLength: 1, maxLength: 2, selector: ([k]) => k })
  .map((objects) => ['objects:', ...objects.flatMap(([name, attrs]) => [`  ${name}:`, `    label: ${name} # the ${name}s`, '    attributes:', ...attrs.map(([a, v]) => `      ${a}: ${v}`)])].join('\n') + '\n');

/** Random strings of the characters YAML gives meaning to, and of its tokens (indents, keys, flow, quotes, comments). */
const noise = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'ab01 :-,[]{}#"\'\n.+~?&*!|>%@`\\\t'.split('')), maxLength: 40 }),
  fc
    .array(fc.constantFrom('a', 'b: ', 'c:', '- ', '-', '  ', '\n', '\n  ', '{', '}', '[', ']', ', ', ',', '"x y"', "'it''s'", '"\\u00e9\\n"', ' #c', '#', '1', '-2', '.5', '1e3', 'null', '~', 'true', ':', ': ', '? ', '0x1F', '"a\n  b"', '\n    ', '\n- ', '\n  - ', 'k: ', '\n  k: ', '\n    k: ', "'q: r'", '"[x]"', '\r\n', '\r'), { maxLength: 24 })
    .map((tokens) => tokens.join('')),
);

/** The same text with Windows line ends: read alike by both, and by the fast path whenever the LF text is. */
const crlf = (t: string): string => t.replace(/\n/g, '\r\n');

function run(seed: number, runs: number): void {
  let fast = 0;
  const both = (t: string): void => {
    const lf = agreesWithYaml(t);
    expect(agreesWithYaml(crlf(t)), JSON.stringify(t)).toBe(lf);
    if (lf) fast++;
  };
  checkProperty('yaml written in its styles', written, both, seed, runs);
  expect(fast).toBeGreaterThan(runs / 2);
  fast = 0;
  checkProperty('declarations typed by hand', typed, both, seed, runs);
  expect(fast).toBeGreaterThan(runs / 2);
  checkProperty('strings of YAML characters', noise, (t) => void agreesWithYaml(t), seed, runs * 4);
}

describe('plain YAML read by js-yaml agrees with yaml', () => {
  it('fixed seed', () => run(20261129, 400));
  it(`random seed ${randomSeed}`, () => run(randomSeed, Number(process.env["FAST_YAML_RUNS"] ?? 400)));

  it('leaves every YAML feature where the two could part to yaml', () => {
    const declined = [
      'a: &x 1\nb: *x\n', // anchor and alias
      'a: !!str 1\n', // tag
      'a: |\n  text\n', // block scalars
      'a: >\n  text\n',
      'base: {}\n<<: {}\n', // merge key
      '? a\n: b\n', // explicit key
      '%YAML 1.2\n---\na: 1\n', // directive, document marker
      'a: 1\n---\nb: 2\n', // two documents
      'a: 1\rb: 2\n', // a carriage return that ends no line
      'a:\n\t- 1\n', // tab
      '\uFEFFa: 1\n', // BOM
      'null: 1\n', // a key yaml names "" and js-yaml "null"
      '~: 1\n',
      '{ : 1 }\n',
      '', // empty: null in yaml, undefined in js-yaml
      '\n',
      'a: 1\na: 2\n', // a duplicate key: yaml reports it with its position
      'a: [1, 2\n', // a syntax error: yaml reports it with its position
    ];
    for (const t of declined) expect(plainYamlValue(t), JSON.stringify(t)).toBeUndefined();
  });

  it('reads what declarations are made of, to the values yaml gives', () => {
    const text = [
      'objects:',
      '  deal:',
      '    label: "Deal: big"  # a comment',
      '    attributes:',
      '      title: { type: text, required: true, maxLength: 200 }',
      '      amount: { type: number, min: 0, max: 1.5e3 }',
      '      stage: { type: select, options: [lead, won, "null"], default: lead }',
      '      file: { type: document, accepts: [application/pdf, "image/*"], maxFileSize: 10MB }',
      'views:',
      '  open:',
      '    object: deal',
      '    filter: { stage: { in: [lead] } }',
      '    sort: [{ attribute: amount, direction: desc }]',
      '',
    ].join('\n');
    expect(agreesWithYaml(text)).toBe(true);
  });

  it('keeps a "__proto__" key an own key, as yaml does, and touches no prototype', () => {
    for (const text of ['__proto__: { polluted: 1 }\n', 'objects:\n  __proto__:\n    attributes: { a: { type: text } }\n']) {
      expect(agreesWithYaml(text)).toBe(true);
      const value = plainYamlValue(text)!.value as object;
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    }
    const read = plainYamlValue('__proto__: { polluted: 1 }\n')!.value as Record<string, unknown>;
    expect(Object.keys(read)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
