import { describe, expect, it } from 'vitest';
import type { Declaration } from '../../engine/model/declaration.js';
import { keepsValue } from '../../engine/model/types/registry.js';
import { planPush, refusal } from '../../engine/plan/index.js';
import type { Plan } from '../../engine/plan/types.js';
import { MemoryFacts, storedFrom, storedViews, type Rows } from './plan-facts.js';

/**
 * Planner rules the sync audit found missing: losses that used to pass as plain `~`
 * changes, relation targets across object renames and to nowhere, required + default
 * backfill, and what refusals tell the user (sample ids, the full allow list).
 */
const base = (): Declaration => ({
  objects: {
    company: { attributes: { name: { type: 'text' } } },
    deal: {
      attributes: {
        title: { type: 'text' },
        code: { type: 'text' },
        closed: { type: 'datetime' },
        amount: { type: 'integer' },
        company: { type: 'relation', target: 'company' },
        files: { type: 'document', multiple: true },
      },
    },
  },
  views: {},
});

function planOf(before: Declaration, after: Declaration, rows: Rows = {}): Plan {
  const objects = storedFrom(before);
  return planPush({
    sourceId: 'crm', declaration: after, objects, views: storedViews(before),
    source: { id: 'crm', version: 1, appliedAt: null, declaration: before }, facts: new MemoryFacts(objects, rows),
  });
}

const deals = (n: number, values: (i: number) => Record<string, unknown>) => Array.from({ length: n }, (_, i) => ({ id: `d${i}`, values: values(i) }));

describe('planner: losses the plan used to hide', () => {
  it('document → another type is destructive with the number of attached documents', () => {
    const after = base();
    after.objects.deal!.attributes.files = { type: 'text' };
    const plan = planOf(base(), after, { deal: deals(3, (i) => ({ files: i === 0 ? null : ['f1', 'f2'] })) });
    expect(plan.steps[0]).toMatchObject({ action: 'change_attribute', target: 'deal.files', destructive: true, affected: 4 });
    expect(plan.steps[0]!.reason).toMatch(/deletes 4 attached documents/);
    expect(refusal(plan, { currentVersion: 1 })?.code).toBe('SCHEMA_DESTRUCTIVE_NOT_ALLOWED');
    expect(refusal(plan, { currentVersion: 1, allowDestructive: ['deal.files'] })).toBeUndefined();
    // without documents attached nothing is lost
    expect(planOf(base(), after, { deal: deals(2, () => ({})) }).steps[0]).toMatchObject({ destructive: false });
  });

  it('the registry keeps widenings and values that convert back to themselves', () => {
    expect(keepsValue({ name: 'a', type: 'datetime' }, { name: 'a', type: 'date' }, '2026-01-02T10:30:00.000Z', '2026-01-02')).toBe(false);
    expect(keepsValue({ name: 'a', type: 'datetime' }, { name: 'a', type: 'date' }, '2026-01-02T00:00:00.000Z', '2026-01-02')).toBe(true);
    expect(keepsValue({ name: 'a', type: 'text' }, { name: 'a', type: 'integer' }, '00501', 501)).toBe(false);
    expect(keepsValue({ name: 'a', type: 'text' }, { name: 'a', type: 'integer' }, '501', 501)).toBe(true);
    expect(keepsValue({ name: 'a', type: 'integer' }, { name: 'a', type: 'text' }, 7, '7')).toBe(true);
  });

  it('datetime → date counts values whose time is dropped; text → integer counts "00501"', () => {
    const after = base();
    after.objects.deal!.attributes.closed = { type: 'date' };
    after.objects.deal!.attributes.code = { type: 'integer' };
    const rows = { deal: deals(4, (i) => ({ closed: i < 3 ? '2026-01-02T10:30:00.000Z' : '2026-01-02T00:00:00.000Z', code: ['00501', '12', 'x', null][i] })) };
    const plan = planOf(base(), after, rows);
    const step = (t: string) => plan.steps.find((s) => s.target === t)!;
    expect(step('deal.closed')).toMatchObject({ destructive: true, affected: 3, sampleIds: ['d0', 'd1', 'd2'] });
    expect(step('deal.closed').reason).toMatch(/alters 3 stored values/);
    expect(step('deal.code')).toMatchObject({ destructive: true, affected: 2, sampleIds: ['d0', 'd2'] });
    expect(step('deal.code').reason).toMatch(/cannot convert 1 .* alters 1/);
    const err = refusal(plan, { currentVersion: 1, allowDestructive: ['deal.code'] });
    expect(err?.code).toBe('SCHEMA_DESTRUCTIVE_NOT_ALLOWED');
    // the message names only what is not covered, the fix the whole list to pass next time
    expect(err!.message).toMatch(/lose data in deal\.closed and/);
    expect(err!.details.fix).toMatch(/--allow-destructive deal\.code,deal\.closed$/);
    expect(err!.details.data).toMatchObject({ steps: [{ target: 'deal.closed', sampleIds: ['d0', 'd1', 'd2'] }] });
  });
});

describe('planner: relation targets', () => {
  const renamed = (keepOld: boolean): Declaration => {
    const d = base();
    d.objects.organization = { ...d.objects.company!, renamedFrom: 'company' };
    delete d.objects.company;
    d.objects.deal!.attributes.company = { type: 'relation', target: keepOld ? 'company' : 'organization' };
    return d;
  };

  it('an object rename carries links: the new target name is no target change', () => {
    const rows = { deal: deals(2, () => ({ company: 'c1' })), company: [{ id: 'c1', values: { name: 'Acme' } }] };
    for (const keepOld of [false, true]) {
      const plan = planOf(base(), renamed(keepOld), rows);
      expect(plan.conflicts).toEqual([]);
      expect(plan.steps.map((s) => `${s.action} ${s.target}`)).toEqual(['rename_object organization']);
    }
  });

  it('after the rename, keeping the old target name plans zero steps (no perpetual diff)', () => {
    const applied = renamed(false);
    for (const keepOld of [false, true]) expect(planOf(applied, renamed(keepOld)).steps).toEqual([]);
  });

  it('a target neither declared nor stored is a conflict naming attribute and target', () => {
    const after = base();
    after.objects.deal!.attributes.owner = { type: 'relation', target: 'person' };
    after.objects.ticket = { attributes: { who: { type: 'relation', target: 'ghost' } } };
    const plan = planOf(base(), after);
    expect(plan.conflicts.map((c) => `${c.code} ${c.target} ${c.rule}`)).toEqual([
      'SCHEMA_SYNC_CONFLICT deal.owner missing_target',
      'SCHEMA_SYNC_CONFLICT ticket.who missing_target',
    ]);
    expect(plan.conflicts[0]!.message).toMatch(/deal\.owner .*person/);
    expect(plan.conflicts[0]!.fix).toMatch(/declare person .* or create it/);
    expect(refusal(plan, { currentVersion: 1, allowDestructive: true })).toMatchObject({ code: 'SCHEMA_SYNC_CONFLICT', status: 409 });
  });

  it('a relation target change with links names up to five sample ids', () => {
    const before = base();
    before.objects.person = { attributes: { name: { type: 'text' } } };
    const after = structuredClone(before);
    after.objects.deal!.attributes.company = { type: 'relation', target: 'person' };
    const plan = planOf(before, after, { deal: deals(7, () => ({ company: 'c1' })) });
    expect(plan.conflicts[0]).toMatchObject({ rule: 'relation_target', count: 7, sampleIds: ['d0', 'd1', 'd2', 'd3', 'd4'] });
    expect(plan.conflicts[0]!.message).toMatch(/7 records \(e\.g\. d0, d1, d2, d3, d4\) to company/);
  });
});

describe('planner: required', () => {
  it('an existing attribute made required with a default backfills instead of conflicting', () => {
    const after = base();
    after.objects.deal!.attributes.amount = { type: 'integer', required: true, default: 0 };
    const plan = planOf(base(), after, { deal: deals(3, (i) => ({ amount: i === 0 ? 5 : null })) });
    expect(plan.conflicts).toEqual([]);
    expect(plan.steps[0]).toMatchObject({ action: 'change_attribute', backfill: 2, affected: 2, destructive: false });
    expect(plan.steps[0]!.reason).toMatch(/fills 2 empty values with the default/);
    // without a default it is still the required-over-nulls conflict
    after.objects.deal!.attributes.amount = { type: 'integer', required: true };
    expect(planOf(base(), after, { deal: deals(3, (i) => ({ amount: i === 0 ? 5 : null })) }).conflicts[0]).toMatchObject({ rule: 'required', count: 2 });
  });

  it('unique with a default backfills one empty value, but two would share the default: a unique conflict', () => {
    const after = base();
    after.objects.deal!.attributes.code = { type: 'text', required: true, unique: true, default: 'none' };
    const one = planOf(base(), after, { deal: deals(3, (i) => ({ code: i === 0 ? null : `c${i}` })) });
    expect(one.conflicts).toEqual([]);
    expect(one.steps[0]).toMatchObject({ action: 'change_attribute', backfill: 1 });
    const two = planOf(base(), after, { deal: deals(3, (i) => ({ code: i === 0 ? 'c0' : null })) });
    expect(two.conflicts).toEqual([expect.objectContaining({ rule: 'unique', count: 2, sampleIds: ['d1', 'd2'] })]);
    expect(two.conflicts[0]!.message).toMatch(/^2 records \(e\.g\. d1, d2\) share their value of deal\.code/);
  });

  it('a new required attribute over existing records names sample ids', () => {
    const after = base();
    after.objects.deal!.attributes.region = { type: 'text', required: true };
    const c = planOf(base(), after, { deal: deals(7, () => ({})) }).conflicts[0]!;
    expect(c).toMatchObject({ rule: 'required', count: 7, sampleIds: ['d0', 'd1', 'd2', 'd3', 'd4'] });
    expect(c.message).toMatch(/7 records \(e\.g\. d0, d1, d2, d3, d4\) already exist/);
  });
});
