import { describe, expect, it } from 'vitest';
import type { Declaration } from '../../engine/model/declaration.js';
import type { StoredObject, StoredView } from '../../engine/model/stored.js';
import { planPush, refusal } from '../../engine/plan/index.js';
import type { Plan } from '../../engine/plan/types.js';
import { MemoryFacts, storedFrom, storedObject, storedViews, type Rows } from './plan-facts.js';

const base: Declaration = {
  objects: {
    company: { label: 'Company', attributes: { name: { type: 'text', required: true, unique: true, maxLength: 120 }, employees: { type: 'integer', min: 0 } } },
    deal: {
      attributes: {
        title: { type: 'text', required: true },
        stage: { type: 'select', options: ['lead', 'won', 'lost'] },
        amount: { type: 'integer' },
        company: { type: 'relation', target: 'company' },
        files: { type: 'document', multiple: true },
      },
    },
  },
  views: { open_deals: { object: 'deal', filter: { stage: 'lead' }, columns: ['title'] } },
};

function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Plan `after` against a store holding `before` (pushed by source crm) plus `rows`. */
function planOf(before: Declaration, after: Declaration, rows: Rows = {}, extra: { objects?: StoredObject[]; views?: StoredView[] } = {}): Plan {
  const objects = [...storedFrom(before), ...(extra.objects ?? [])];
  return planPush({
    sourceId: 'crm',
    declaration: after,
    objects,
    views: [...storedViews(before), ...(extra.views ?? [])],
    source: { id: 'crm', version: 3, appliedAt: null, declaration: before },
    facts: new MemoryFacts(objects, rows),
  });
}

function brief(plan: Plan) {
  return plan.steps.map((s) => `${s.action} ${s.target}${s.destructive ? ` !${s.affected ?? 0}` : ''}`);
}

const deals = (n: number, values: (i: number) => Record<string, unknown>) =>
  Array.from({ length: n }, (_, i) => ({ id: `d${i}`, values: values(i) }));

describe('planPush', () => {
  it('plans zero steps for a declaration against its own result', () => {
    const plan = planOf(base, clone(base), { deal: deals(3, (i) => ({ title: `t${i}` })) });
    expect(plan.steps).toEqual([]);
    expect(plan.conflicts).toEqual([]);
    expect(plan.baseVersion).toBe(3);
  });

  it('treats defaults and absent fields alike (required: false, document 25MB)', () => {
    const after = clone(base);
    after.objects.deal!.attributes.amount = { type: 'integer', required: false, unique: false };
    after.objects.deal!.attributes.files = { type: 'document', multiple: true, maxFileSize: 25 * 1024 * 1024 };
    expect(planOf(base, after).steps).toEqual([]);
  });

  it('creates objects into an empty store, relation targets first, views last', () => {
    const plan = planPush({
      sourceId: 'crm', declaration: { objects: { deal: base.objects.deal!, company: base.objects.company! }, views: base.views },
      objects: [], views: [], source: undefined, facts: new MemoryFacts([], {}),
    });
    expect(brief(plan)).toEqual(['create_object company', 'create_object deal', 'create_view view:open_deals']);
    expect(plan.baseVersion).toBe(0);
    expect(plan.summary).toMatchObject({ create: 3, drop: 0, destructive: 0 });
  });

  it('adds, changes and drops attributes; drops with data are destructive with counts', () => {
    const after = clone(base);
    delete after.objects.deal!.attributes.amount;
    after.objects.deal!.attributes.note = { type: 'text' };
    after.objects.company!.label = 'Firm';
    const plan = planOf(base, after, { deal: deals(4, (i) => ({ title: 't', amount: i < 3 ? i : null })) });
    expect(brief(plan)).toEqual(['change_object company', 'add_attribute deal.note', 'drop_attribute deal.amount !3']);
    expect(refusal(plan, { currentVersion: 3 })?.code).toBe('SCHEMA_DESTRUCTIVE_NOT_ALLOWED');
    expect(refusal(plan, { currentVersion: 3, allowDestructive: ['deal.amount'] })).toBeUndefined();
    expect(refusal(plan, { currentVersion: 3, allowDestructive: ['deal'] })?.code).toBe('SCHEMA_DESTRUCTIVE_NOT_ALLOWED');
    expect(refusal(plan, { currentVersion: 3, allowDestructive: true })).toBeUndefined();
  });

  it('a drop without data is not destructive', () => {
    const after = clone(base);
    delete after.objects.deal!.attributes.amount;
    const plan = planOf(base, after, { deal: deals(2, () => ({ title: 't' })) });
    expect(brief(plan)).toEqual(['drop_attribute deal.amount']);
    expect(refusal(plan, { currentVersion: 3 })).toBeUndefined();
  });

  it('widening converts in place; a lossy change is destructive with the unconvertible count', () => {
    const after = clone(base);
    after.objects.deal!.attributes.amount = { type: 'number' };
    let plan = planOf(base, after, { deal: deals(2, () => ({ title: 't', amount: 5 })) });
    expect(plan.steps[0]).toMatchObject({ action: 'change_attribute', label: 'widening', convert: true, destructive: false });

    const lossy = clone(base);
    lossy.objects.deal!.attributes.title = { type: 'integer' };
    plan = planOf(base, lossy, { deal: deals(3, (i) => ({ title: i === 0 ? '12' : 'abc' })) });
    expect(plan.steps[0]).toMatchObject({ action: 'change_attribute', label: 'destructive', destructive: true, affected: 2, convert: true });
  });

  it.each([
    ['required over nulls', (d: Declaration) => { d.objects.deal!.attributes.amount = { type: 'integer', required: true }; }, (i: number) => ({ title: 't', amount: i === 1 ? 1 : null }), 'required', 2, /fill deal.amount .* or give deal.amount a default/],
    ['unique over duplicates', (d: Declaration) => { d.objects.deal!.attributes.title = { type: 'text', required: true, unique: true }; }, () => ({ title: 'same' }), 'unique', 3, /distinct/],
    ['removed options in use', (d: Declaration) => { d.objects.deal!.attributes.stage = { type: 'select', options: ['lead'] }; }, (i: number) => ({ title: 't', stage: i === 0 ? 'lead' : 'won' }), 'options', 2, /option/],
    ['maxLength below stored lengths', (d: Declaration) => { d.objects.deal!.attributes.title = { type: 'text', required: true, maxLength: 2 }; }, () => ({ title: 'long' }), 'length', 3, /shorten/],
    ['min above stored values', (d: Declaration) => { d.objects.deal!.attributes.amount = { type: 'integer', min: 10 }; }, (i: number) => ({ title: 't', amount: i }), 'range', 3, /min\/max/],
    ['pattern stored values break', (d: Declaration) => { d.objects.deal!.attributes.title = { type: 'text', required: true, pattern: '^[0-9]+$' }; }, (i: number) => ({ title: i === 0 ? '1' : 'x' }), 'pattern', 2, /pattern/],
    ['single-file over several', (d: Declaration) => { d.objects.deal!.attributes.files = { type: 'document', multiple: false }; }, (i: number) => ({ title: 't', files: i === 0 ? ['a'] : ['a', 'b'] }), 'multiple', 2, /one value/],
  ])('data conflict: %s', (_name, change, values, rule, count, fix) => {
    const after = clone(base);
    change(after);
    const plan = planOf(base, after, { deal: deals(3, values) });
    expect(plan.conflicts).toHaveLength(1);
    const c = plan.conflicts[0]!;
    expect(c).toMatchObject({ code: 'SCHEMA_SYNC_CONFLICT', rule, count });
    expect(c.sampleIds!.length).toBe(count);
    expect(c.fix).toMatch(fix);
    const err = refusal(plan, { currentVersion: 3, allowDestructive: true });
    expect(err?.code).toBe('SCHEMA_SYNC_CONFLICT');
    expect(err?.status).toBe(409);
  });

  it('caps sample ids at five', () => {
    const after = clone(base);
    after.objects.deal!.attributes.amount = { type: 'integer', required: true };
    const plan = planOf(base, after, { deal: deals(9, () => ({ title: 't' })) });
    expect(plan.conflicts[0]).toMatchObject({ count: 9 });
    expect(plan.conflicts[0]!.sampleIds).toHaveLength(5);
  });

  it('a new required attribute without default over existing records conflicts; with a default it applies', () => {
    const after = clone(base);
    after.objects.deal!.attributes.region = { type: 'text', required: true };
    expect(planOf(base, after, { deal: deals(2, () => ({ title: 't' })) }).conflicts[0]).toMatchObject({ rule: 'required', count: 2 });
    after.objects.deal!.attributes.region = { type: 'text', required: true, default: 'eu' };
    expect(planOf(base, after, { deal: deals(2, () => ({ title: 't' })) }).conflicts).toEqual([]);
  });

  it('relation target change with existing links conflicts', () => {
    const d: Declaration = clone(base);
    d.objects.person = { attributes: { name: { type: 'text' } } };
    const after = clone(d);
    after.objects.deal!.attributes.company = { type: 'relation', target: 'person' };
    expect(planOf(d, after, { deal: deals(2, () => ({ title: 't' })) }).conflicts).toEqual([]);
    const plan = planOf(d, after, { deal: deals(2, (i) => ({ title: 't', company: i === 0 ? 'c1' : null })) });
    expect(plan.conflicts[0]).toMatchObject({ code: 'SCHEMA_SYNC_CONFLICT', rule: 'relation_target', count: 1 });
  });

  it('ownership: core, bundle and other sources refuse with SCHEMA_DUPLICATE_OBJECT / SCHEMA_DUPLICATE', () => {
    const after = clone(base);
    after.objects.invoice = { attributes: { total: { type: 'number' } } };
    after.views.theirs = { object: 'deal' };
    const plan = planOf(base, after, {}, {
      objects: [storedObject('invoice', { attributes: {} }, { kind: 'source', id: 'billing' })],
      views: [{ name: 'theirs', object: 'deal', owner: { kind: 'source', id: 'billing' } }],
    });
    expect(plan.conflicts.map((c) => `${c.code} ${c.target}`)).toEqual(['SCHEMA_DUPLICATE_OBJECT invoice', 'SCHEMA_DUPLICATE view:theirs']);
    expect(plan.conflicts[0]!.message).toMatch(/source billing/);
    for (const kind of ['core', 'bundle'] as const) {
      const p = planOf(base, after, {}, { objects: [storedObject('invoice', { attributes: {} }, { kind })] });
      expect(refusal(p, { currentVersion: 3 })?.code).toBe('SCHEMA_DUPLICATE_OBJECT');
    }
  });

  it('another source\'s objects are never dropped; runtime attributes on own objects are kept', () => {
    const objects = [storedObject('invoice', { attributes: { total: { type: 'number' } } }, { kind: 'source', id: 'billing' })];
    const deal = storedFrom(base).find((o) => o.name === 'deal')!;
    deal.attributes.push({ ...deal.attributes.at(-1)!, name: 'scratch', type: 'text', owner: { kind: 'runtime' } });
    const plan = planPush({
      sourceId: 'crm', declaration: base,
      objects: [...storedFrom(base).filter((o) => o.name !== 'deal'), deal, ...objects],
      views: storedViews(base), source: { id: 'crm', version: 1, appliedAt: null, declaration: base },
      facts: new MemoryFacts([], {}),
    });
    expect(plan.steps).toEqual([]);
  });

  it('adopts a runtime object and a runtime attribute of the same type; a clashing type conflicts', () => {
    const after = clone(base);
    after.objects.lead = { attributes: { email: { type: 'email' } } };
    const runtime = storedObject('lead', { attributes: { email: { type: 'email' }, notes: { type: 'text' } } }, { kind: 'runtime' });
    let plan = planOf(base, after, {}, { objects: [runtime] });
    expect(brief(plan)).toEqual(['change_object lead', 'change_attribute lead.email']);
    expect(plan.steps[1]).toMatchObject({ adopt: true });
    expect(plan.conflicts).toEqual([]);

    after.objects.lead.attributes.email = { type: 'integer' };
    plan = planOf(base, after, {}, { objects: [runtime] });
    expect(plan.conflicts[0]).toMatchObject({ code: 'SCHEMA_SYNC_CONFLICT', rule: 'type_clash', target: 'lead.email' });
    expect(plan.conflicts[0]!.fix).toMatch(/rename .* or convert the runtime attribute/);
  });

  it('protected entities are untouchable', () => {
    const after = clone(base);
    after.objects.account = { attributes: { name: { type: 'text' } } };
    const prot = storedObject('account', { attributes: { name: { type: 'text' } } }, { kind: 'runtime' }, { protected: true });
    expect(refusal(planOf(base, after, {}, { objects: [prot] }), { currentVersion: 3 })?.code).toBe('SCHEMA_SYNC_CONFLICT');
  });

  it('dropping an object that remaining relations target is SCHEMA_OBJECT_REFERENCED', () => {
    const after = clone(base);
    delete after.objects.company;
    const plan = planOf(base, after);
    expect(plan.conflicts).toEqual([expect.objectContaining({ code: 'SCHEMA_OBJECT_REFERENCED', target: 'company' })]);
    expect(plan.conflicts[0]!.message).toMatch(/deal\.company/);
    // dropping the relation too: relation attribute dropped before its target
    delete after.objects.deal!.attributes.company;
    const ok = planOf(base, after, { company: [{ id: 'c1', values: { name: 'x' } }] });
    expect(ok.conflicts).toEqual([]);
    expect(brief(ok)).toEqual(['drop_attribute deal.company', 'drop_object company !1']);
  });

  it('dropping both a referrer and its target orders the referrer first', () => {
    const plan = planOf(base, { objects: {}, views: {} });
    expect(brief(plan)).toEqual(['drop_view view:open_deals', 'drop_object deal', 'drop_object company']);
    expect(plan.conflicts).toEqual([]);
  });

  it('renamedFrom renames objects and attributes in place; re-pushing is a no-op', () => {
    const after = clone(base);
    after.objects.opportunity = { ...after.objects.deal!, renamedFrom: 'deal' };
    delete after.objects.deal;
    after.objects.opportunity.attributes.headline = { ...after.objects.opportunity.attributes.title!, renamedFrom: 'title' };
    delete after.objects.opportunity.attributes.title;
    after.views.open_deals!.object = 'opportunity';
    after.views.open_deals!.columns = ['headline'];
    after.objects.company!.attributes = { ...after.objects.company!.attributes };
    const plan = planOf(base, after, { deal: deals(2, () => ({ title: 't' })) });
    expect(brief(plan)).toEqual(['rename_object opportunity', 'rename_attribute opportunity.headline', 'change_view view:open_deals']);
    expect(plan.steps.some((s) => s.destructive)).toBe(false);
    // against its own result the renamedFrom hints name nothing stored: no steps
    const again = planOf(after, after);
    expect(again.steps).toEqual([]);
  });

  it('refusal order: ownership before conflicts before references before losses before if-match', () => {
    const after = clone(base);
    delete after.objects.company;
    delete after.objects.deal!.attributes.amount;
    after.objects.deal!.attributes.title = { type: 'text', required: true, unique: true };
    after.objects.invoice = { attributes: {} };
    const rows = { deal: deals(2, () => ({ title: 'same', amount: 1 })) };
    const other = [storedObject('invoice', { attributes: {} }, { kind: 'core' })];
    const codes = (p: Plan) => refusal(p, { currentVersion: 4, ifMatch: 3 })?.code;
    expect(codes(planOf(base, after, rows, { objects: other }))).toBe('SCHEMA_DUPLICATE_OBJECT');
    expect(codes(planOf(base, after, rows))).toBe('SCHEMA_SYNC_CONFLICT');
    after.objects.deal!.attributes.title = { type: 'text', required: true };
    expect(codes(planOf(base, after, rows))).toBe('SCHEMA_OBJECT_REFERENCED');
    after.objects.company = clone(base.objects.company!);
    const lossy = planOf(base, after, rows);
    const err = refusal(lossy, { currentVersion: 4, ifMatch: 3 });
    expect(err).toMatchObject({ code: 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED', status: 500 });
    expect(err!.details.data).toMatchObject({ steps: [expect.objectContaining({ target: 'deal.amount', affected: 2 })] });
    expect(err!.details.fix).toMatch(/--allow-destructive deal.amount/);
    expect(refusal(lossy, { currentVersion: 4, ifMatch: 3, allowDestructive: true })?.code).toBe('SCHEMA_CONFLICT');
    expect(refusal(lossy, { currentVersion: 4, ifMatch: 4, allowDestructive: true })).toBeUndefined();
  });

  it('is deterministic', () => {
    const after = clone(base);
    delete after.objects.company;
    after.objects.x = { attributes: { a: { type: 'text' } } };
    expect(planOf(base, after)).toEqual(planOf(base, after));
  });
});
