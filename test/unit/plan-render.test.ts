import { describe, expect, it } from 'vitest';
import { makeColors } from '../../cli/context.js';
import { renderPlanGithub, renderPlanText } from '../../cli/render/plan.js';
import type { Declaration } from '../../engine/model/declaration.js';
import { planPush } from '../../engine/plan/index.js';
import { MemoryFacts, storedFrom, storedViews } from './plan-facts.js';

const before: Declaration = {
  objects: {
    company: { attributes: { name: { type: 'text', required: true } } },
    deal: { attributes: { title: { type: 'text' }, amount: { type: 'integer' }, legacy: { type: 'text' } } },
    old: { attributes: { x: { type: 'text' } } },
  },
  views: { open_deals: { object: 'deal', columns: ['title'] } },
};
const after: Declaration = {
  objects: {
    company: { label: 'Company', attributes: { name: { type: 'text', required: true, unique: true } } },
    deal: { attributes: { headline: { type: 'text', renamedFrom: 'title' }, amount: { type: 'number', max: 100 }, stage: { type: 'select', options: ['a', 'b'] } } },
  },
  views: { open_deals: { object: 'deal', columns: ['headline'] } },
};

function plan() {
  const objects = storedFrom(before);
  const rows = {
    company: [{ id: 'c1', values: { name: 'same' } }, { id: 'c2', values: { name: 'same' } }],
    deal: [{ id: 'd1', values: { legacy: 'x' } }],
    old: [{ id: 'o1', values: {} }, { id: 'o2', values: {} }],
  };
  return planPush({
    sourceId: 'crm', declaration: after, objects, views: storedViews(before),
    source: { id: 'crm', version: 2, appliedAt: null, declaration: before }, facts: new MemoryFacts(objects, rows),
  });
}

describe('plan renderer', () => {
  it('text: + ~ - ! with destructive counts and the summary', () => {
    expect(renderPlanText(plan(), makeColors(false), 'http://127.0.0.1:4400/v1')).toMatchInlineSnapshot(`
      "Source crm at version 2 on http://127.0.0.1:4400/v1
        ~ deal.title → deal.headline — renamed from title; keeps its values
        ~ object company: label (none) → Company
        + deal.stage: select options ["a","b"]
        ~ company.name: unique false → true
        ~ deal.amount: type integer → number, max (none) → 100 (widening, converted in place)
        - deal.legacy [destructive: 1 value] — no longer declared; deletes 1 non-null value
        - object old [destructive: 2 records] — no longer declared; deletes 2 records
        ~ view:open_deals: columns ["title"] → ["headline"]

      Conflicts (the push would be refused):
        ! SCHEMA_SYNC_CONFLICT company.name: 2 records (e.g. c1, c2) share their value of company.name with another record, and company.name is now unique.
            fix: make the values of company.name distinct first, or drop unique

      Destructive steps need --allow-destructive (all) or --allow-destructive deal.legacy,old

      Plan: 1 to create, 5 to change, 2 to drop; 2 destructive; 1 conflict.
      "
    `);
  });

  it('github: conflicts are errors at file:line, destructive steps warnings', () => {
    const out = renderPlanGithub(plan(), (t) => (t.startsWith('company') ? { file: 'schema/company.yaml', line: 3, column: 5 } : undefined));
    expect(out).toMatchInlineSnapshot(`
      "::error file=schema/company.yaml,line=3,col=5,title=SCHEMA_SYNC_CONFLICT::2 records (e.g. c1, c2) share their value of company.name with another record, and company.name is now unique. Fix: make the values of company.name distinct first, or drop unique
      ::notice title=rename_attribute::~ deal.title → deal.headline — renamed from title; keeps its values
      ::notice file=schema/company.yaml,line=3,col=5,title=change_object::~ object company: label (none) → Company
      ::notice title=add_attribute::+ deal.stage: select options ["a","b"]
      ::notice file=schema/company.yaml,line=3,col=5,title=change_attribute::~ company.name: unique false → true
      ::notice title=change_attribute::~ deal.amount: type integer → number, max (none) → 100 (widening, converted in place)
      ::warning title=destructive::- deal.legacy [destructive: 1 value] — no longer declared; deletes 1 non-null value
      ::warning title=destructive::- object old [destructive: 2 records] — no longer declared; deletes 2 records
      ::notice title=change_view::~ view:open_deals: columns ["title"] → ["headline"]
      Plan: 1 to create, 5 to change, 2 to drop; 2 destructive; 1 conflict.
      "
    `);
  });

  it('the --allow-destructive reminder shows only while some loss is uncovered, naming every loss', () => {
    const reminder = /Destructive steps need --allow-destructive \(all\) or --allow-destructive deal\.legacy,old/;
    expect(renderPlanText(plan(), makeColors(false), undefined, { allow: ['deal.legacy'] })).toMatch(reminder);
    expect(renderPlanText(plan(), makeColors(false), undefined, { allow: ['deal.legacy', 'old'] })).not.toMatch(/Destructive steps need/);
    expect(renderPlanText(plan(), makeColors(false), undefined, { allow: true })).not.toMatch(/Destructive steps need/);
  });

  it('an empty plan says there is nothing to do', () => {
    const objects = storedFrom(before);
    const p = planPush({ sourceId: 'crm', declaration: before, objects, views: storedViews(before), source: { id: 'crm', version: 2, appliedAt: null, declaration: before }, facts: new MemoryFacts(objects, {}) });
    expect(renderPlanText(p, makeColors(false))).toBe('Source crm at version 2\n\nNo changes. The instance matches the declaration.\n');
  });
});

describe('conflict wording', () => {
  it('agrees with the count', async () => {
    const { violationMessage } = await import('../../engine/plan/messages.js');
    expect(violationMessage('required', 'deal.stage', 1, ['r1']).message).toBe('1 record (e.g. r1) has no value for deal.stage, which is now required.');
    expect(violationMessage('required', 'deal.stage', 2, ['r1', 'r2']).message).toBe('2 records (e.g. r1, r2) have no value for deal.stage, which is now required.');
    expect(violationMessage('unique', 'deal.code', 1, []).message).toBe('1 record shares its value of deal.code with another record, and deal.code is now unique.');
  });
});
