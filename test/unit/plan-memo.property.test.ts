import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateDeclaration } from '../../engine/declaration/validate.js';
import type { AttributeDecl, Declaration } from '../../engine/model/declaration.js';
import type { Owner, StoredObject } from '../../engine/model/stored.js';
import { planPush, pushPlanner, type DataFacts, type Plan } from '../../engine/plan/index.js';
import { checkProperty, randomSeed } from '../support/property.js';
import { MemoryFacts, storedObject, type Rows } from './plan-facts.js';

/**
 * pushPlanner (engine/plan/planner.ts) is a cache: across the data probe's runs it reuses
 * each object's attribute diff that asked no data question. On random pushes (objects kept,
 * dropped, added, renamed; attributes added, dropped, renamed, retyped, constrained; owners
 * of every kind; random stored values), the plan the probe ends with through pushPlanner
 * equals the plan it ends with through planPush on every run (the uncached path), and both
 * equal planPush over facts that know everything from the start.
 */
const OBJECTS = ['o0', 'o1', 'o2', 'o3'] as const;
const ATTRS = ['a', 'b', 'c', 'd'] as const;

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
const compact = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const attribute: fc.Arbitrary<AttributeDecl> = fc
  .tuple(
    fc.oneof(
      fc.record({ type: fc.constant('text'), maxLength: maybe(fc.integer({ min: 1, max: 3 })), unique: maybe(fc.boolean()), default: maybe(fc.constant('zz')) }),
      fc.record({ type: fc.constantFrom('number', 'integer'), max: maybe(fc.integer({ min: 0, max: 5 })), default: maybe(fc.constant(1)) }),
      fc.record({ type: fc.constant('select'), options: fc.constantFrom(['x', 'y'], ['x']) }),
      fc.record({ type: fc.constant('relation'), target: fc.constantFrom(...OBJECTS) }),
      fc.record({ type: fc.constantFrom('boolean', 'date') }),
    ),
    maybe(fc.boolean()),
  )
  .map(([a, required]) => compact({ ...a, required }) as unknown as AttributeDecl);

const attributes = fc.dictionary(fc.constantFrom(...ATTRS), attribute, { maxKeys: 4 });

/** The stored side: objects with owners of every kind, and values of any type (the rules judge them). */
const storedSide = fc.record({
  objects: fc.dictionary(fc.constantFrom(...OBJECTS), fc.record({ attributes, owner: fc.constantFrom<Owner>({ kind: 'source', id: 's' }, { kind: 'source', id: 's' }, { kind: 'runtime' }, { kind: 'source', id: 'other' }) }), { maxKeys: 4 }),
  rows: fc.array(fc.record({ object: fc.constantFrom(...OBJECTS), values: fc.dictionary(fc.constantFrom(...ATTRS), fc.constantFrom<unknown>('x', 'abcd', 'zz', 3, 7, 2.5, true, '2024-01-01', null)) }), { maxLength: 12 }),
});

/** The declared side: per object kept, changed, renamed from another, or new. */
const declaredSide = fc.dictionary(
  fc.constantFrom(...OBJECTS, 'o4'),
  fc.record({ attributes, renamedFrom: maybe(fc.constantFrom(...OBJECTS)), renames: fc.dictionary(fc.constantFrom(...ATTRS), fc.constantFrom(...ATTRS), { maxKeys: 2 }) }),
  { maxKeys: 5 },
);

interface Case {
  declaration: Declaration;
  previous: Declaration;
  objects: StoredObject[];
  rows: Rows;
}

const cases: fc.Arbitrary<Case | undefined> = fc.record({ stored: storedSide, declared: declaredSide }).map(({ stored, declared }) => {
  const previous = validateDeclaration({ objects: Object.fromEntries(Object.entries(stored.objects).map(([n, o]) => [n, { attributes: o.attributes }])), views: {} }).value;
  const objects: Record<string, unknown> = {};
  for (const [name, o] of Object.entries(declared)) {
    const attrs: Record<string, unknown> = {};
    for (const [a, spec] of Object.entries(o.attributes)) attrs[a] = o.renames[a] && o.renames[a] !== a ? { ...spec, renamedFrom: o.renames[a] } : spec;
    objects[name] = compact({ attributes: attrs, renamedFrom: o.renamedFrom !== name ? o.renamedFrom : undefined });
  }
  const declaration = validateDeclaration({ objects, views: {} }).value;
  if (!previous || !declaration) return undefined;
  const storedObjects = Object.entries(stored.objects).map(([name, o]) => storedObject(name, { attributes: o.attributes }, o.owner));
  const rows: Rows = {};
  stored.rows.forEach((r, i) => {
    if (stored.objects[r.object]) (rows[r.object] ??= []).push({ id: `r${i}`, values: r.values });
  });
  return { declaration, previous, objects: storedObjects, rows };
});

/**
 * engine/store/sql/probe.ts's loop over in-memory facts: a question not answered yet is
 * answered "nothing stored" and noted; the planner runs again with the answers until it
 * asks nothing new. Returns the last plan and how many runs it took.
 */
function probe(run: (facts: DataFacts) => Plan, full: DataFacts): { plan: Plan; runs: number } {
  const answers = new Map<string, unknown>();
  for (let runs = 1; ; runs++) {
    const asked = new Map<string, () => unknown>();
    const ask = <R>(key: unknown[], get: () => R, none: R): R => {
      const k = JSON.stringify(key);
      if (answers.has(k)) return answers.get(k) as R;
      asked.set(k, get);
      return none;
    };
    const facts: DataFacts = {
      recordCount: (o) => ask(['recordCount', o], () => full.recordCount(o), 0),
      nonNullCount: (o, a) => ask(['nonNullCount', o, a], () => full.nonNullCount(o, a), 0),
      violations: (o, a, next) => ask(['violations', o, a, next], () => full.violations(o, a, next), []),
      documentCount: (o, a) => ask(['documentCount', o, a], () => full.documentCount(o, a), 0),
      recordSample: (o) => ask(['recordSample', o], () => full.recordSample(o), []),
    };
    const plan = run(facts);
    if (asked.size === 0) return { plan, runs };
    for (const [k, get] of asked) answers.set(k, get());
  }
}

describe('pushPlanner reuses diffs across the probe runs and plans as planPush does', () => {
  const run = (seed: number, numRuns: number) => {
    const seen = { reran: 0, steps: 0, conflicts: 0, destructive: 0 };
    checkProperty(
      'pushPlanner vs planPush',
      cases,
      (c) => {
        fc.pre(c !== undefined);
        const { declaration, previous, objects, rows } = c!;
        const input = { sourceId: 's', declaration, objects, views: [], roles: [], source: { id: 's', version: 3, appliedAt: null, declaration: previous } };
        const full = new MemoryFacts(objects, rows);
        const cached = probe(pushPlanner(input), full);
        const uncached = probe((facts) => planPush({ ...input, facts }), full);
        expect(cached.plan).toEqual(uncached.plan);
        expect(cached.runs).toBe(uncached.runs);
        expect(cached.plan).toEqual(planPush({ ...input, facts: full }));
        if (cached.runs > 1) seen.reran++;
        if (cached.plan.steps.length > 0) seen.steps++;
        if (cached.plan.conflicts.length > 0) seen.conflicts++;
        if (cached.plan.steps.some((s) => s.destructive)) seen.destructive++;
      },
      seed,
      numRuns,
    );
    // Not vacuous: the corpus reaches re-runs (the cached path), steps, conflicts and losses.
    expect(Math.min(seen.reran, seen.steps, seen.conflicts, seen.destructive), JSON.stringify(seen)).toBeGreaterThan(0);
  };

  it('fixed seed 14', () => run(14, 400));
  it(`random seed ${randomSeed}`, () => run(randomSeed, 200));
});
