import { describe, expect, it } from 'vitest';
import type { Declaration } from '../../engine/model/declaration.js';
import type { Plan } from '../../engine/plan/types.js';
import type { SqlStore } from '../../engine/store/sql/store.js';
import { freshSqliteStore, type OpenedSqliteStore } from '../support/sqlite-store.js';
import type { Actor } from '../../engine/store/types.js';
import { errorOf } from '../support/service-error.js';

/** The data probe, the plan applier and pushSource over a real database (issue 4). */
let store: SqlStore;
let db: OpenedSqliteStore['db'];
const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };

freshSqliteStore('ss-sync-', (opened) => ({ store, db } = opened));

const decl = (extra: Record<string, unknown> = {}): Declaration => ({
  objects: {
    company: { attributes: { name: { type: 'text', required: true } } },
    deal: {
      label: 'Deal',
      attributes: {
        title: { type: 'text' },
        amount: { type: 'integer' },
        company: { type: 'relation', target: 'company' },
        ...extra,
      },
    },
  },
  views: { open_deals: { object: 'deal', filter: { amount: { gt: 0 } } } },
});

describe('store facts', () => {
  it('counts and finds violations per rule with sample ids', async () => {
    await store.pushSource('crm', decl(), {});
    const facts = store.facts();
    expect((await facts.recordCount('deal'))).toBe(0);
    expect((await facts.recordCount('ghost'))).toBe(0);
    const c = (await store.createRecord('company', { name: 'A' }, actor));
    const rows = (await store.bulkCreate('deal', [{ title: 'abc', amount: 5, company: c.id }, { title: 'abc' }, { title: 'x', amount: 50 }], actor));
    expect((await facts.recordCount('deal'))).toBe(3);
    expect((await facts.nonNullCount('deal', 'amount'))).toBe(2);
    // Bulk rows share created_at, so sample order follows ids: compare as sets.
    const sorted = (v: { rule: string; count: number; sampleIds: string[] }[]) => v.map((x) => ({ ...x, sampleIds: [...x.sampleIds].sort() }));
    const ids = (...i: number[]) => i.map((n) => rows[n]!.id).sort();
    expect(sorted((await facts.violations('deal', 'title', { name: 'title', type: 'text', maxLength: 2 })))).toEqual([{ rule: 'length', count: 2, sampleIds: ids(0, 1) }]);
    expect((await facts.violations('deal', 'amount', { name: 'amount', type: 'integer', required: true, max: 10 }))).toEqual(
      expect.arrayContaining([
        { rule: 'required', count: 1, sampleIds: [rows[1]!.id] },
        { rule: 'range', count: 1, sampleIds: [rows[2]!.id] },
      ]),
    );
    expect((await facts.violations('deal', 'title', { name: 'title', type: 'select', options: ['abc'] }))).toEqual([
      { rule: 'options', count: 1, sampleIds: [rows[2]!.id] },
    ]);
    expect((await facts.violations('deal', 'title', { name: 'title', type: 'integer' }))[0]).toMatchObject({ rule: 'type', count: 3 });
    expect(sorted((await facts.violations('deal', 'title', { name: 'title', type: 'text', unique: true })))).toEqual([{ rule: 'unique', count: 2, sampleIds: ids(0, 1) }]);
  });

  it('lists every rule a value breaks: unique next to length and pattern, required for what cannot convert', async () => {
    await store.pushSource('crm', decl(), {});
    const facts = store.facts();
    const rows = (await store.bulkCreate('deal', [{ title: 'hello' }, { title: 'hello' }, { title: '12' }], actor));
    const byRule = (v: { rule: string; count: number; sampleIds: string[] }[]) => Object.fromEntries(v.map((x) => [x.rule, x.count]));
    // one value over maxLength and off the pattern is both (it used to be misread as 'type', i.e. a loss)
    expect(byRule((await facts.violations('deal', 'title', { name: 'title', type: 'text', unique: true, maxLength: 3, pattern: '^[0-9]+$' })))).toEqual({ length: 2, pattern: 2, unique: 2 });
    // "hello" cannot become an integer: it becomes null, which a required attribute refuses
    expect(byRule((await facts.violations('deal', 'title', { name: 'title', type: 'integer', required: true })))).toEqual({ type: 2, required: 2 });
    expect((await facts.violations('deal', 'title', { name: 'title', type: 'integer', required: true })).find((v) => v.rule === 'required')!.sampleIds.sort()).toEqual([rows[0]!.id, rows[1]!.id].sort());
    expect(byRule((await facts.violations('deal', 'title', { name: 'title', type: 'integer' })))).toEqual({ type: 2 });
  });
});

describe('store pushSource', () => {
  it('creates objects, relations and views owned by the source; re-push is a no-op', async () => {
    const r = (await store.pushSource('crm', decl(), {}));
    expect(r).toMatchObject({ version: 1, applied: true });
    expect((await store.requireObject('deal')).owner).toEqual({ kind: 'source', id: 'crm' });
    expect((await store.findView('open_deals'))).toMatchObject({ object: 'deal', owner: { kind: 'source', id: 'crm' } });
    expect((await store.findSource('crm'))).toMatchObject({ version: 1, declaration: decl() });
    expect((await store.findSource('crm'))?.appliedAt).toBeTruthy();
    const again = (await store.pushSource('crm', decl(), {}));
    expect(again).toMatchObject({ version: 1, applied: true });
    expect(again.plan.steps).toEqual([]);
  });

  it('a dry run changes nothing', async () => {
    const r = (await store.pushSource('crm', decl(), { dryRun: true }));
    expect(r.applied).toBe(false);
    expect(r.plan.steps.length).toBeGreaterThan(0);
    expect((await store.listObjects())).toEqual([]);
    expect((await store.findSource('crm'))).toBeUndefined();
  });

  it('renames keep data and relation indexes; a lossy change needs allowDestructive', async () => {
    await store.pushSource('crm', decl(), {});
    const c = (await store.createRecord('company', { name: 'A' }, actor));
    const d = (await store.createRecord('deal', { title: 'hello', amount: 3, company: c.id }, actor));
    const renamed: Declaration = {
      objects: {
        company: decl().objects['company']!,
        opportunity: { renamedFrom: 'deal', attributes: { heading: { type: 'text', renamedFrom: 'title' }, amount: { type: 'integer' }, company: { type: 'relation', target: 'company' } } },
      },
      views: { open_deals: { object: 'opportunity' } },
    };
    expect((await store.pushSource('crm', renamed, {})).version).toBe(2);
    expect((await store.getRecord('opportunity', d.id)).values).toMatchObject({ heading: 'hello', company: c.id });
    expect((await store.search('opportunity', { filter: { company: c.id } })).records).toHaveLength(1);
    // Deleting the company clears the link through the renamed relation.
    const lossy = { ...renamed, objects: { ...renamed.objects, opportunity: { ...renamed.objects['opportunity']!, attributes: { ...renamed.objects['opportunity']!.attributes, heading: { type: 'integer' } } } } } as Declaration;
    const refused = await errorOf(() => store.pushSource('crm', lossy, {}));
    expect(refused.code).toBe('SCHEMA_DESTRUCTIVE_NOT_ALLOWED');
    expect((await store.getRecord('opportunity', d.id)).values['heading']).toBe('hello');
    expect((await store.pushSource('crm', lossy, { allowDestructive: ['opportunity.heading'] })).version).toBe(3);
    expect((await store.getRecord('opportunity', d.id)).values['heading']).toBeNull();
    expect((await errorOf(() => store.pushSource('crm', decl(), { ifMatch: 1, allowDestructive: true }))).code).toBe('SCHEMA_CONFLICT');
  });

  it('a plan that fails partway is rolled back whole', async () => {
    await store.pushSource('crm', decl(), {});
    const plan: Plan = {
      source: 'crm',
      baseVersion: 1,
      planHash: '',
      conflicts: [],
      summary: { create: 1, change: 0, drop: 1, destructive: 0, conflicts: 0 },
      steps: [
        { action: 'create_object', target: 'note', object: 'note', decl: { attributes: { body: { type: 'text' } } }, destructive: false, label: 'additive' },
        { action: 'add_attribute', target: 'deal.stage', object: 'deal', spec: { name: 'stage', type: 'text' }, destructive: false, label: 'additive' },
        { action: 'drop_attribute', target: 'deal.ghost', object: 'deal', attribute: 'ghost', destructive: false, label: 'destructive' },
      ],
    };
    await expect(store.applyPlan(plan, 'crm', decl())).rejects.toThrow(/ghost/);
    expect((await store.findObject('note'))).toBeUndefined();
    expect((await store.requireObject('deal')).attributes.some((a) => a.name === 'stage')).toBe(false);
    expect((await store.findSource('crm'))?.version).toBe(1);
    // The schema cache was dropped with the rollback: the store still writes the old shape.
    expect((await store.createRecord('deal', { title: 'ok' }, actor)).values['title']).toBe('ok');
  });

  it('a type change rebuilds the table keeping records, their order, links and every other index', async () => {
    const withCode = (amount: Record<string, unknown>): Declaration => {
      const d = decl({ code: { type: 'text', unique: true } });
      d.objects['deal']!.attributes['amount'] = amount as never;
      return d;
    };
    await store.pushSource('crm', withCode({ type: 'integer' }), {});
    const c = (await store.createRecord('company', { name: 'A' }, actor));
    const ids: string[] = [];
    for (const n of [3, 1, 2]) ids.push((await store.createRecord('deal', { title: `t${n}`, amount: n, code: `c${n}`, company: c.id }, actor)).id);
    const indexes = () => (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'r_deal' ORDER BY name").pluck().all() as string[]);
    const before = indexes();
    expect(before.length).toBeGreaterThanOrEqual(3); // primary key, unique code, relation company

    const r = (await store.pushSource('crm', withCode({ type: 'number' }), {}));
    expect(r.plan.steps).toMatchObject([{ action: 'change_attribute', target: 'deal.amount' }]);
    expect(indexes()).toEqual(before);
    expect(await Promise.all(ids.map(async (id) => (await store.getRecord('deal', id)).values))).toEqual(
      [3, 1, 2].map((n) => expect.objectContaining({ title: `t${n}`, amount: n, code: `c${n}`, company: c.id })),
    );
    expect(db.prepare('SELECT typeof(amount) FROM r_deal').pluck().all()).toEqual(['real', 'real', 'real']);
    // Insertion order (rowid) survives: samples stay oldest first.
    expect(await store.facts().recordSample('deal')).toEqual(ids);
    // The unique index still refuses, the relation index still finds.
    await expect(store.createRecord('deal', { code: 'c1' }, actor)).rejects.toThrow();
    expect((await store.search('deal', { filter: { company: c.id } })).records).toHaveLength(3);
    expect(db.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');

    // A failure after the rebuild rolls it back: old table, old type, same records.
    const plan: Plan = {
      source: 'crm', baseVersion: 2, conflicts: [], planHash: '',
      summary: { create: 0, change: 1, drop: 1, destructive: 0, conflicts: 0 },
      steps: [
        { action: 'change_attribute', target: 'deal.amount', object: 'deal', attribute: 'amount', from: { name: 'amount', type: 'number' }, to: { name: 'amount', type: 'text' }, changes: [], convert: true, destructive: false, label: 'change' },
        { action: 'drop_attribute', target: 'deal.ghost', object: 'deal', attribute: 'ghost', destructive: false, label: 'destructive' },
      ],
    };
    await expect(store.applyPlan(plan, 'crm', withCode({ type: 'text' }))).rejects.toThrow(/ghost/);
    expect((await store.requireObject('deal')).attributes.find((a) => a.name === 'amount')?.type).toBe('number');
    expect(db.prepare('SELECT typeof(amount) FROM r_deal').pluck().all()).toEqual(['real', 'real', 'real']);
    expect(indexes()).toEqual(before);
    expect(await store.facts().recordSample('deal')).toEqual(ids);
  });

  it('a handed-over declaration is kept as the source declaration only while the stored row is that push', async () => {
    const first = decl();
    await store.pushSource('crm', first, { handOver: true });
    expect((await store.findSource('crm'))?.declaration).toBe(first); // no re-read of the stored text
    // a refused push leaves the last applied declaration
    const bad = decl({ amount: { type: 'text', required: true } });
    await store.createRecord('deal', { title: 'x' }, actor);
    await expect(store.pushSource('crm', bad, { handOver: true })).rejects.toThrow();
    expect((await store.findSource('crm'))?.declaration).toBe(first);
    // a write by anyone else (another process on the file) moves the row: the text is read again
    db.prepare("UPDATE _ss_sources SET version = version + 1, declaration = '{\"objects\":{},\"views\":{}}' WHERE id = 'crm'").run();
    expect((await store.findSource('crm'))?.declaration).toEqual({ objects: {}, views: {} });
  });
});
