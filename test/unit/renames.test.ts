import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validateDeclaration } from '../../engine/declaration/validate.js';
import type { Declaration } from '../../engine/model/declaration.js';
import { renameOf } from '../../engine/model/renames.js';
import { openStore } from '../../engine/store/index.js';
import type { Actor, Store } from '../../engine/store/types.js';

/**
 * `renamedFrom` has one definition (engine/model/renames.ts): what the validator accepts as
 * a rename is what the planner renames. The planner once asked `renamedFrom in declared`,
 * which is true for `constructor` (a valid name, and a key of every object's prototype), so
 * it dropped and re-created what the validator had accepted as a rename: data lost.
 */
let dir: string;
let store: Store;
const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ss-renames-'));
  store = await openStore({ path: join(dir, 'schemasync.db') });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const valid = (d: Declaration) => validateDeclaration(d).diagnostics.filter((x) => x.severity === 'error');

describe('renamedFrom: the validator and the planner agree', () => {
  it('an object renamed from "constructor" is renamed in place, its records kept', async () => {
    await store.pushSource('crm', { objects: { constructor: { attributes: { title: { type: 'text' } } } }, views: {} } as Declaration, {});
    const r = await store.createRecord('constructor', { title: 'kept' }, actor);
    const next: Declaration = { objects: { builder: { renamedFrom: 'constructor', attributes: { title: { type: 'text' } } } }, views: {} };
    expect(valid(next)).toEqual([]);
    const result = await store.pushSource('crm', next, {});
    expect(result.plan.steps.map((s) => `${s.action} ${s.target}`)).toEqual(['rename_object builder']);
    expect((await store.getRecord('builder', r.id)).values['title']).toBe('kept');
  });

  it('an attribute renamed from "constructor" keeps its values', async () => {
    await store.pushSource('crm', { objects: { deal: { attributes: { constructor: { type: 'text' } } } }, views: {} } as Declaration, {});
    const r = await store.createRecord('deal', { constructor: 'kept' }, actor);
    const next: Declaration = { objects: { deal: { attributes: { maker: { type: 'text', renamedFrom: 'constructor' } } } }, views: {} };
    expect(valid(next)).toEqual([]);
    const result = await store.pushSource('crm', next, {});
    expect(result.plan.steps.map((s) => `${s.action} ${s.target}`)).toEqual(['rename_attribute deal.maker']);
    expect((await store.getRecord('deal', r.id)).values['maker']).toBe('kept');
  });

  it('an object or attribute named "constructor" that is no longer declared is dropped, like any other', async () => {
    await store.pushSource('crm', { objects: { constructor: { attributes: { t: { type: 'text' } } }, deal: { attributes: { constructor: { type: 'text' }, t: { type: 'text' } } } }, views: {} } as Declaration, {});
    const plan = await store.pushSource('crm', { objects: { deal: { attributes: { t: { type: 'text' } } } }, views: {} }, { dryRun: true });
    expect(plan.plan.steps.map((s) => `${s.action} ${s.target}`).sort()).toEqual(['drop_attribute deal.constructor', 'drop_object constructor']);
  });

  it('what the validator refuses as a rename, the planner does not follow', () => {
    const declared = { deal: {}, company: {} };
    expect(renameOf('deal', { renamedFrom: 'deal' }, declared)).toBeUndefined();
    expect(renameOf('deal', { renamedFrom: 'company' }, declared)).toBeUndefined();
    expect(renameOf('deal', { renamedFrom: 'constructor' }, declared)).toBe('constructor');
    expect(renameOf('deal', {}, declared)).toBeUndefined();
    const still = validateDeclaration({ objects: { deal: { renamedFrom: 'company', attributes: {} }, company: { attributes: {} } }, views: {} });
    expect(still.diagnostics.some((d) => /still declared/.test(d.message))).toBe(true);
  });
});
