import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../engine/declaration/diagnostic.js';
import { validateDeclaration, type ValidationResult } from '../../engine/declaration/validate.js';
import type { Declaration } from '../../engine/model/declaration.js';
import { DeclarationCheck } from '../../engine/server/declaration-cache.js';
import { checkProperty, randomSeed } from '../support/property.js';

/**
 * DeclarationCheck (engine/server/declaration-cache.ts) is a cache: after a source's valid
 * push it checks only the objects that changed. On random push sequences of two sources —
 * one object edited (the cached path), nothing changed, objects added or removed, views or
 * roles changed, valid and invalid bodies mixed — what PUT /schema/sources/:id uses of its
 * answer (the declaration and the errors, in order) must equal validateDeclaration run
 * whole on the same body.
 */
const OBJECTS = ['deal', 'company', 'person', 'task'] as const;
const ATTRS = ['title', 'amount', 'stage', 'link', 'done'] as const;
type Raw = { objects: Record<string, unknown>; views: Record<string, unknown>; roles?: Record<string, unknown> };

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
const compact = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** A valid attribute (relation targets the object set; `ghost` is a warning only). */
const goodAttribute: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc.oneof(
      { weight: 4, arbitrary: fc.record({ type: fc.constant('text'), maxLength: maybe(fc.integer({ min: 1, max: 9 })), unique: maybe(fc.boolean()) }) },
      { weight: 2, arbitrary: fc.record({ type: fc.constantFrom('number', 'integer'), min: maybe(fc.integer({ min: -5, max: 5 })), default: maybe(fc.integer({ min: 5, max: 9 })) }) },
      { weight: 2, arbitrary: fc.record({ type: fc.constant('select'), options: fc.constantFrom(['a', 'b'], ['a']), default: maybe(fc.constant('a')) }) },
      { weight: 3, arbitrary: fc.record({ type: fc.constant('relation'), target: fc.constantFrom(...OBJECTS, 'ghost'), multiple: maybe(fc.boolean()) }) },
      { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('boolean', 'date') }) },
    ),
    maybe(fc.boolean()),
  )
  .map(([a, required]) => compact({ ...a, required }));

/** One fault: a typo, a bad constraint or default, a malformed target, an unknown field, a rename. */
const badAttribute: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.constant({ type: 'strng' }),
  fc.constant({ type: 'text', maxLength: 0 }),
  fc.constant({ type: 'text', pattern: '(' }),
  fc.constant({ type: 'number', default: 'x' }),
  fc.constant({ type: 'select', options: [] }),
  fc.constant({ type: 'select', options: ['a'], default: 'z' }),
  fc.constant({ type: 'relation', target: 'Bad-Name' }),
  fc.constant({ type: 'text', colour: 'red' }),
  // renamedFrom: an error when the old name is declared as well, else fine
  fc.record({ type: fc.constant('text'), renamedFrom: fc.constantFrom<string>(...ATTRS, 'old_name') }),
);

const attribute = fc.oneof({ weight: 12, arbitrary: goodAttribute }, { weight: 1, arbitrary: badAttribute });

const objectBody = fc
  .tuple(
    fc.dictionary(fc.oneof({ weight: 80, arbitrary: fc.constantFrom<string>(...ATTRS) }, { weight: 1, arbitrary: fc.constantFrom('id', 'Bad') }), attribute, { minKeys: 1, maxKeys: 3 }),
    maybe(fc.constantFrom('A label', '')),
    fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom<string>(...OBJECTS, 'legacy') }),
  )
  .map(([attributes, label, renamedFrom]) => compact({ attributes, label, renamedFrom }));

/** Views at the start: none, or now and then a malformed one; the `view` edit below makes valid ones. */
const views = fc.oneof({ weight: 12, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.constant({ 'Bad View': { object: 'deal' } }) });

const declaration: fc.Arbitrary<Raw> = fc.record({
  objects: fc.dictionary(fc.oneof({ weight: 80, arbitrary: fc.constantFrom<string>(...OBJECTS) }, { weight: 1, arbitrary: fc.constant('skill') }), objectBody, { minKeys: 1, maxKeys: 4 }),
  views,
});

type Edit =
  | { kind: 'change'; pick: number; body: Record<string, unknown> }
  | { kind: 'same' }
  | { kind: 'add'; name: string; body: Record<string, unknown> }
  | { kind: 'remove'; pick: number }
  | { kind: 'rename'; pick: number; to: string }
  | { kind: 'view'; pick: number; columns: number; bad: boolean }
  | { kind: 'noview' }
  | { kind: 'roles' };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  // one object edited, the rest as before: the case the cache exists for
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('change' as const), pick: fc.nat(), body: objectBody }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'same' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('add' as const), name: fc.constantFrom<string>(...OBJECTS, 'extra'), body: objectBody }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }) },
  // an object's key renamed in place: the same number of names, another set
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rename' as const), pick: fc.nat(), to: fc.constantFrom<string>(...OBJECTS, 'legacy') }) },
  // a view over a declared object, listing some of its attributes (or one it lacks)
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('view' as const), pick: fc.nat(), columns: fc.nat(), bad: fc.nat(5).map((n) => n === 0) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'noview' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'roles' as const }) },
);

function applyEdit(d: Raw, e: Edit): Raw {
  const next = structuredClone(d);
  const names = Object.keys(next.objects);
  const at = (pick: number) => names[pick % names.length]!;
  switch (e.kind) {
    case 'change':
      next.objects[at(e.pick)] = structuredClone(e.body);
      break;
    case 'same':
      break;
    case 'add':
      next.objects[e.name] = structuredClone(e.body);
      break;
    case 'remove':
      if (names.length > 1) delete next.objects[at(e.pick)];
      break;
    case 'rename': {
      const from = at(e.pick);
      if (next.objects[e.to] !== undefined) break;
      next.objects = Object.fromEntries(Object.entries(next.objects).map(([n, o]) => [n === from ? e.to : n, o]));
      break;
    }
    case 'view': {
      const object = at(e.pick);
      const body = next.objects[object] as { attributes?: Record<string, unknown> } | undefined;
      const attrs = Object.keys(body?.attributes ?? {});
      const columns = attrs.filter((_, i) => (e.columns >> i) & 1);
      next.views = { open_deals: { object, ...(columns.length > 0 || e.bad ? { columns: e.bad ? [...columns, 'nope'] : columns } : {}) } };
      break;
    }
    case 'noview':
      next.views = {};
      break;
    case 'roles':
      if (next.roles) delete next.roles;
      else next.roles = { sales: { permissions: [{ object: names[0]!, actions: ['read'] }, { object: 'stored_only', actions: ['read'] }] } };
      break;
  }
  return next;
}

const STORED = new Set(['stored_only']);
const errorsOf = (r: ValidationResult<Declaration>): Diagnostic[] => r.diagnostics.filter((d) => d.severity === 'error');

describe('DeclarationCheck: the cached check agrees with validating the whole declaration', () => {
  const run = (seed: number, numRuns: number) => {
    let pushes = 0;
    let cachedAnswers = 0;
    checkProperty(
      'DeclarationCheck',
      fc.record({ first: fc.tuple(declaration, declaration), steps: fc.array(fc.tuple(fc.constantFrom(0, 1), edit), { minLength: 1, maxLength: 16 }) }),
      ({ first, steps }) => {
        const check = new DeclarationCheck();
        const state: Raw[] = [first[0], first[1]];
        const push = (source: 0 | 1) => {
          const body = structuredClone(state[source]!);
          const cached = check.validate(`s${source}`, body as unknown as Record<string, unknown>, () => STORED);
          const whole = validateDeclaration(structuredClone(state[source]!), state[source]!.roles !== undefined ? { storedObjects: STORED } : {});
          expect(errorsOf(cached)).toEqual(errorsOf(whole));
          expect(cached.value).toEqual(whole.value);
          pushes++;
          // A full run returns this body's own object nodes; the cached path returns remembered ones for objects it did not check.
          if (cached.value && Object.keys(body.objects).some((n) => cached.value!.objects[n] !== body.objects[n])) cachedAnswers++;
        };
        push(0);
        push(1);
        for (const [source, e] of steps) {
          state[source] = applyEdit(state[source]!, e);
          push(source);
        }
      },
      seed,
      numRuns,
    );
    // Not vacuous: a good share of the pushes was answered by the cached path.
    console.log(`DeclarationCheck seed ${seed}: ${cachedAnswers} of ${pushes} pushes answered by the cached path`);
    expect(cachedAnswers / pushes).toBeGreaterThan(0.07);
  };

  it('fixed seed 14', () => run(14, 300));
  it(`random seed ${randomSeed}`, () => run(randomSeed, 100));
});
