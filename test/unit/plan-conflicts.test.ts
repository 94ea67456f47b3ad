import { describe, expect, it } from 'vitest';
import type { Declaration } from '../../engine/model/declaration.js';
import type { StoredObject } from '../../engine/model/stored.js';
import { planPush, refusal } from '../../engine/plan/index.js';
import type { Plan } from '../../engine/plan/types.js';
import { MemoryFacts, storedFrom, storedObject, storedViews, type Rows } from './plan-facts.js';

/**
 * Planner rules of the second sync audit: nulls a conversion leaves under a required
 * attribute, renamedFrom onto a name that exists too, and the records a new attribute's
 * default is written into.
 */
const base = (): Declaration => ({
  objects: {
    item: { attributes: { amount: { type: 'number' }, k: { type: 'text', required: true } } },
  },
  views: {},
});

function planOf(before: Declaration, after: Declaration, rows: Rows = {}, extra: StoredObject[] = []): Plan {
  const objects = [...storedFrom(before), ...extra];
  return planPush({
    sourceId: 'crm', declaration: after, objects, views: storedViews(before),
    source: { id: 'crm', version: 1, appliedAt: null, declaration: before }, facts: new MemoryFacts(objects, rows),
  });
}

const items = (values: Record<string, unknown>[]) => values.map((v, i) => ({ id: `i${i}`, values: v }));

describe('planner: a conversion under required', () => {
  it('values that cannot convert become nulls a required attribute refuses (409 rule required)', () => {
    const after = base();
    after.objects.item!.attributes.k = { type: 'integer', required: true };
    const plan = planOf(base(), after, { item: items([{ k: '12' }, { k: 'abc' }]) });
    expect(plan.conflicts).toEqual([expect.objectContaining({ code: 'SCHEMA_SYNC_CONFLICT', target: 'item.k', rule: 'required', count: 1, sampleIds: ['i1'] })]);
    const err = refusal(plan, { currentVersion: 1, allowDestructive: ['item.k'] });
    expect(err).toMatchObject({ code: 'SCHEMA_SYNC_CONFLICT', status: 409 });
  });

  it('with a non-null default the converted nulls are backfilled: destructive, no conflict', () => {
    const after = base();
    after.objects.item!.attributes.k = { type: 'integer', required: true, default: 0 };
    const plan = planOf(base(), after, { item: items([{ k: '12' }, { k: 'abc' }]) });
    expect(plan.conflicts).toEqual([]);
    expect(plan.steps).toEqual([expect.objectContaining({ action: 'change_attribute', target: 'item.k', destructive: true, affected: 1, backfill: 1 })]);
    expect(plan.steps[0]!.reason).toMatch(/cannot convert 1 .*fills 1 empty value with the default/);
  });
});

describe('planner: renamedFrom onto a name that exists too', () => {
  it('an attribute: both names stored is a conflict, not adopt-and-drop', () => {
    const runtimeQty = storedObject('item', { attributes: { qty: { type: 'number' } } }, { kind: 'runtime' }).attributes.find((a) => a.name === 'qty')!;
    const stored = storedFrom(base());
    stored[0]!.attributes.push(runtimeQty);
    const after: Declaration = { objects: { item: { attributes: { qty: { type: 'number', renamedFrom: 'amount' }, k: { type: 'text', required: true } } } }, views: {} };
    const plan = planPush({
      sourceId: 'crm', declaration: after, objects: stored, views: [],
      source: { id: 'crm', version: 1, appliedAt: null, declaration: base() }, facts: new MemoryFacts(stored, { item: items([{ amount: 42, k: 'a' }]) }),
    });
    expect(plan.conflicts).toEqual([expect.objectContaining({ code: 'SCHEMA_SYNC_CONFLICT', target: 'item.qty', rule: 'rename_clash' })]);
    expect(plan.conflicts[0]!.message).toMatch(/item\.amount .*item\.qty.*both exist/);
    expect(plan.conflicts[0]!.fix).toMatch(/drop or rename .*item\.qty.* or remove renamedFrom/);
    expect(refusal(plan, { currentVersion: 1, allowDestructive: true })).toMatchObject({ code: 'SCHEMA_SYNC_CONFLICT', status: 409 });
  });

  it('an object: both names stored is a conflict', () => {
    const after: Declaration = { objects: { neu: { renamedFrom: 'item', attributes: base().objects.item!.attributes } }, views: {} };
    const runtime = storedObject('neu', { attributes: {} }, { kind: 'runtime' });
    const plan = planOf(base(), after, { item: items([{ amount: 1, k: 'a' }]) }, [runtime]);
    expect(plan.conflicts).toEqual([expect.objectContaining({ code: 'SCHEMA_SYNC_CONFLICT', target: 'neu', rule: 'rename_clash' })]);
    expect(plan.steps.filter((s) => s.action === 'drop_object')).toEqual([]);
  });

  it('a leftover renamedFrom stays a no-op: old name gone, or the old name is someone else\'s again', () => {
    const renamed: Declaration = {
      objects: { neu: { renamedFrom: 'item', attributes: { qty: { type: 'number', renamedFrom: 'amount' }, k: { type: 'text', required: true } } } },
      views: {},
    };
    expect(planOf(renamed, renamed).steps).toEqual([]);
    expect(planOf(renamed, renamed).conflicts).toEqual([]);
    // a runtime object / attribute created later under the old names is not ours to rename
    const runtimeItem = storedObject('item', { attributes: { x: { type: 'text' } } }, { kind: 'runtime' });
    const stored = storedFrom(renamed);
    stored[0]!.attributes.push(storedObject('neu', { attributes: { amount: { type: 'number' } } }, { kind: 'runtime' }).attributes.find((a) => a.name === 'amount')!);
    const plan = planPush({
      sourceId: 'crm', declaration: renamed, objects: [...stored, runtimeItem], views: [],
      source: { id: 'crm', version: 2, appliedAt: null, declaration: renamed }, facts: new MemoryFacts([...stored, runtimeItem], {}),
    });
    expect(plan.conflicts).toEqual([]);
    expect(plan.steps).toEqual([]);
  });
});

describe('planner: a new attribute with a default', () => {
  it('says how many existing records receive the default (not destructive)', () => {
    const after = base();
    after.objects.item!.attributes.n = { type: 'text', default: 'filled' };
    const plan = planOf(base(), after, { item: items([{ k: 'a' }, { k: 'b' }, { k: 'c' }]) });
    expect(plan.steps).toEqual([expect.objectContaining({ action: 'add_attribute', target: 'item.n', destructive: false, affected: 3 })]);
    expect(plan.steps[0]!.reason).toBe('fills 3 records with the default');
    // nothing stored, or no default: nothing to say
    expect(planOf(base(), after).steps[0]).not.toHaveProperty('affected');
    after.objects.item!.attributes.n = { type: 'text' };
    expect(planOf(base(), after, { item: items([{ k: 'a' }]) }).steps[0]).not.toHaveProperty('reason');
  });
});

describe('planner: stored text is measured as the registry measures it', () => {
  // Issue 14: the in-memory facts once counted UTF-16 units (and compiled patterns without
  // the u flag) where the product counts code points, so these plans differed from a push.
  const withK = (k: Record<string, unknown>): Declaration => {
    const d = base();
    d.objects.item!.attributes.k = { type: 'text', required: true, ...k };
    return d;
  };
  const emoji = { item: items([{ k: '😀😀😀' }, { k: 'abc' }, { k: 'abcd' }]) };

  it('maxLength counts code points: three emoji fit maxLength 3, four letters do not', () => {
    const plan = planOf(base(), withK({ maxLength: 3 }), emoji);
    expect(plan.conflicts).toEqual([expect.objectContaining({ code: 'SCHEMA_SYNC_CONFLICT', target: 'item.k', rule: 'length', count: 1, sampleIds: ['i2'] })]);
  });

  it('minLength counts code points: three emoji are too short for minLength 4', () => {
    const plan = planOf(base(), withK({ minLength: 4 }), emoji);
    expect(plan.conflicts).toEqual([expect.objectContaining({ rule: 'length', count: 2, sampleIds: ['i0', 'i1'] })]);
  });

  it('a pattern matches code points (the registry compiles it with the u flag)', () => {
    const plan = planOf(base(), withK({ pattern: '^.{3}$' }), emoji);
    expect(plan.conflicts).toEqual([expect.objectContaining({ rule: 'pattern', count: 1, sampleIds: ['i2'] })]);
  });
});
