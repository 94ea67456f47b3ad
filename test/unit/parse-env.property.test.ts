import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseDocument, stringify } from 'yaml';
import { parseFile, withPlainEnv, type LocatedDiagnostic } from '../../engine/declaration/parse-file.js';
import { checkProperty, randomSeed } from '../support/property.js';

/**
 * withPlainEnv (engine/declaration/parse-file.ts) parses with a plain copy of process.env in
 * place of the real one, because yaml reads process.env on every token. On random YAML
 * (declarations, with syntax noise spliced in) under a random environment that changes
 * between parses (yaml's LOG_TOKENS / LOG_STREAM switches on or off), the parse through it
 * must equal the parse without it: the same document, errors, warnings and yaml's own
 * token log, and afterwards the same process.env object with the same contents — also when
 * the wrapped call throws.
 */
const OPTIONS = { prettyErrors: false, uniqueKeys: true, strict: true } as const;

const scalar = fc.oneof(fc.constantFrom('text', 'number', 'relation', 'deal', '', 'a: b', '#x', '*a', '- x'), fc.integer(), fc.boolean(), fc.constant(null));
const attribute = fc.dictionary(fc.constantFrom('type', 'required', 'target', 'options', 'maxLength'), fc.oneof(scalar, fc.array(scalar, { maxLength: 2 })), { maxKeys: 3 });
const declaration = fc.record({
  objects: fc.dictionary(fc.constantFrom('deal', 'company', 'Bad Name'), fc.record({ attributes: fc.dictionary(fc.constantFrom('title', 'amount', 'stage'), attribute, { maxKeys: 3 }) }), { maxKeys: 2 }),
  views: fc.constant({}),
});
/** Syntax noise: tabs, stray colons and quotes, anchors, aliases, a second document, a duplicate key. */
const NOISE = ['\t', ':', '"', "'", '&a ', '*a', '*b', '{', ']', '\n  - ', '\n---\n', '\nobjects: {}\n', ' #', '<<: *a\n', '%YAML 1.2\n'];
const text = fc
  .tuple(declaration, fc.array(fc.tuple(fc.nat(), fc.constantFrom(...NOISE)), { maxLength: 3 }))
  .map(([d, noise]) => {
    let t = stringify(d);
    for (const [at, s] of noise) {
      const i = at % (t.length + 1);
      t = t.slice(0, i) + s + t.slice(i);
    }
    return t;
  });
/** The environment before one parse: yaml's two debug switches, each on or off. */
const env = fc.record({ LOG_TOKENS: fc.boolean(), LOG_STREAM: fc.boolean() });
const parse = fc.record({ text, env, fails: fc.nat(4).map((n) => n === 0) });

let dir: string;
const logged: string[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ss-plain-env-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.restoreAllMocks();
  delete process.env['LOG_TOKENS'];
  delete process.env['LOG_STREAM'];
});

function setEnv(e: { LOG_TOKENS: boolean; LOG_STREAM: boolean }): void {
  for (const [name, on] of Object.entries(e)) {
    if (on) process.env[name] = '1';
    else delete process.env[name];
  }
}

/** What a parse gives a caller: the value, yaml's errors and warnings, what yaml logged, what was thrown. */
function observe(text: string, fails: boolean, wrap: (fn: () => void) => void) {
  logged.length = 0;
  let doc: ReturnType<typeof parseDocument> | undefined;
  let thrown: unknown;
  try {
    wrap(() => {
      doc = parseDocument(text, OPTIONS);
      if (fails) throw new Error('the wrapped call failed');
    });
  } catch (err) {
    thrown = err instanceof Error ? err.message : err;
  }
  const problems = (list: { code: string; message: string; pos: [number, number] }[] | undefined) => (list ?? []).map((e) => ({ code: e.code, message: e.message, pos: e.pos }));
  let value: unknown;
  try {
    value = doc?.errors.length === 0 ? doc.toJS({ maxAliasCount: 100 }) : undefined;
  } catch (err) {
    value = `toJS failed: ${(err as Error).message}`;
  }
  return { value, errors: problems(doc?.errors), warnings: problems(doc?.warnings), log: [...logged], thrown };
}

describe('withPlainEnv: a parse with the plain copy of process.env equals one with the real process.env', () => {
  const run = (seed: number, numRuns: number) => {
    const seen = { logged: 0, thrown: 0, values: 0, refused: 0 };
    checkProperty(
      'withPlainEnv',
      fc.array(parse, { minLength: 1, maxLength: 4 }),
      (parses) => {
        vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logged.push(args.join(' ')));
        vi.spyOn(console, 'dir').mockImplementation((token: unknown) => void logged.push(JSON.stringify(token)));
        const real = process.env;
        for (const [i, p] of parses.entries()) {
          setEnv(p.env);
          const before = { ...process.env };
          const uncached = observe(p.text, p.fails, (fn) => fn());
          const cached = observe(p.text, p.fails, (fn) => withPlainEnv(fn));
          expect(cached, `parse ${i}`).toEqual(uncached);
          if (uncached.log.length > 0) seen.logged++;
          if (uncached.thrown !== undefined) seen.thrown++;
          // the real environment is back, unchanged, and still the one child processes inherit
          expect(process.env).toBe(real);
          expect({ ...process.env }).toEqual(before);
          // and the product's caller: parseFile reads the same value (or refuses the file) as yaml does without the copy
          if (!p.env.LOG_TOKENS && !p.env.LOG_STREAM) {
            const file = join(dir, `p${i}.yaml`);
            writeFileSync(file, p.text);
            const out: LocatedDiagnostic[] = [];
            const parsed = parseFile(file, out);
            if (parsed.usable && uncached.errors.length === 0) {
              expect(parsed.value).toEqual(uncached.value);
              seen.values++;
            }
            if (uncached.errors.some((e) => e.code !== 'DUPLICATE_KEY')) {
              expect(parsed.usable).toBe(false);
              seen.refused++;
            }
          }
        }
        vi.restoreAllMocks();
      },
      seed,
      numRuns,
    );
    // Not vacuous: yaml logged under the switches, calls threw, files were read and refused.
    expect(Math.min(seen.logged, seen.thrown, seen.values, seen.refused), JSON.stringify(seen)).toBeGreaterThan(0);
  };

  it('fixed seed 14', () => run(14, 200));
  it(`random seed ${randomSeed}`, () => run(randomSeed, 60));
});
