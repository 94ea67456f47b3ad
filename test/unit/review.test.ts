import { describe, expect, it } from 'vitest';
import { compareDrift } from '../../engine/plan/drift.js';
import { planHash } from '../../engine/plan/hash.js';
import { protectConflicts, protectedBy, withProtect } from '../../engine/plan/protect.js';
import type { Plan, Step } from '../../engine/plan/types.js';
import type { Declaration } from '../../engine/model/declaration.js';

const drop = (target: string, extra: Partial<Step> = {}): Step =>
  ({ action: target.includes('.') ? 'drop_attribute' : 'drop_object', target, object: target.split('.')[0], attribute: target.split('.')[1], destructive: true, label: 'destructive', affected: 3, ...extra }) as Step;
const plan = (steps: Step[]): Plan => ({
  source: 'crm', baseVersion: 1, steps, conflicts: [], planHash: planHash(steps),
  summary: { create: 0, change: 0, drop: steps.length, destructive: steps.length, conflicts: 0 },
});

describe('planHash (engine/plan/hash.ts)', () => {
  it('depends on what the steps do to data, not on prose, sample ids or key order', () => {
    const a = planHash([drop('deal.amount', { reason: 'one', sampleIds: ['x'] })]);
    expect(planHash([drop('deal.amount', { reason: 'another', sampleIds: ['y'] })])).toBe(a);
    expect(planHash([drop('deal.amount', { affected: 4 })])).not.toBe(a);
    expect(planHash([drop('deal.amount', { destructive: false })])).not.toBe(a);
    expect(planHash([drop('deal.amount'), drop('deal.stage')])).not.toBe(planHash([drop('deal.stage'), drop('deal.amount')]));
    const add = (spec: Record<string, unknown>) => ({ action: 'add_attribute', target: 'deal.x', object: 'deal', spec, destructive: false, label: 'additive' }) as unknown as Step;
    expect(planHash([add({ name: 'x', type: 'text', maxLength: 3 })])).toBe(planHash([add({ maxLength: 3, type: 'text', name: 'x' })]));
    expect(planHash([add({ name: 'x', type: 'text', maxLength: 3 })])).not.toBe(planHash([add({ name: 'x', type: 'text', maxLength: 4 })]));
  });
});

describe('protect (engine/plan/protect.ts)', () => {
  it('an object entry covers its drop and destructive changes of its attributes; an attribute entry only itself', () => {
    expect(protectedBy(drop('company', { destructive: false, affected: 0 }), ['company'])).toBe('company'); // a drop, even of an empty object
    expect(protectedBy(drop('company.name'), ['company'])).toBe('company');
    expect(protectedBy(drop('deal.amount'), ['deal.amount'])).toBe('deal.amount');
    expect(protectedBy(drop('deal.stage'), ['deal.amount'])).toBeUndefined();
    expect(protectedBy(drop('deal'), ['deal.amount'])).toBe('deal.amount'); // dropping the object drops the attribute
    const change = { action: 'change_attribute', target: 'deal.amount', destructive: false, label: 'change', changes: [] } as unknown as Step;
    expect(protectedBy(change, ['deal.amount'])).toBeUndefined(); // not destructive: allowed
    expect(protectedBy({ ...change, destructive: true } as Step, ['deal'])).toBe('deal');
  });

  it('turns refused steps into conflicts the summary counts', () => {
    const p = withProtect(plan([drop('company'), drop('deal.stage')]), ['company'], 'prod');
    expect(p.conflicts).toEqual([expect.objectContaining({ code: 'SCHEMA_SYNC_CONFLICT', target: 'company', rule: 'target_protected' })]);
    expect(p.summary.conflicts).toBe(1);
    expect(withProtect(plan([drop('deal.stage')]), ['company'], 'prod').conflicts).toEqual([]);
    expect(protectConflicts(plan([drop('company')]), [], 'prod')).toEqual([]);
  });
});

describe('drift (engine/plan/drift.ts)', () => {
  const decl = (attrs: Record<string, Record<string, unknown>>, views: Declaration['views'] = {}): Declaration =>
    ({ objects: { deal: { attributes: attrs } }, views }) as unknown as Declaration;
  it('classifies each difference: pending edit, runtime change, or both', () => {
    const applied = decl({ title: { type: 'text' }, amount: { type: 'number' }, stage: { type: 'text' } });
    const instance = decl({ title: { type: 'text', label: 'Title' }, amount: { type: 'number' }, stage: { type: 'text', maxLength: 9 } });
    const files = decl({ title: { type: 'text' }, amount: { type: 'number', min: 0 }, stage: { type: 'text', maxLength: 5 }, note: { type: 'text' } });
    const r = compareDrift({ source: 'crm', version: 3, applied, instance, files });
    expect(r.items.map((i) => [i.target, i.kind])).toEqual([
      ['deal.title', 'runtime'],
      ['deal.amount', 'pending'],
      ['deal.stage', 'both'],
      ['deal.note', 'pending'],
    ]);
    expect(r.summary).toEqual({ pending: 2, runtime: 1, both: 1 });
  });

  it('sees no drift where the planner sees no change (field order, a default written out)', () => {
    const a = decl({ doc: { type: 'document', maxFileSize: 1048576, multiple: false, required: false } });
    const b = decl({ doc: { multiple: false, maxFileSize: 1048576, type: 'document' } });
    expect(compareDrift({ source: 'crm', version: 1, applied: a, instance: b, files: a }).items).toEqual([]);
  });

  it('compares roles too: a runtime change, a pending edit, and no drift for a spelled-out default', () => {
    const sales = { permissions: [{ object: 'deal', actions: ['read' as const] }] };
    const withRoles = (roles: NonNullable<Declaration['roles']>): Declaration => ({ objects: {}, views: {}, roles });
    const applied = withRoles({ sales, ops: sales });
    const instance = withRoles({ sales: { ...sales, schema: 'none' }, ops: { ...sales, schema: 'read' } });
    const files = withRoles({ sales: { ...sales, renamedFrom: 'sellers' }, ops: sales, audit: sales });
    expect(compareDrift({ source: 'crm', version: 1, applied, instance, files }).items.map((i) => [i.target, i.kind])).toEqual([
      ['role:ops', 'runtime'],
      ['role:audit', 'pending'],
    ]);
  });
});
