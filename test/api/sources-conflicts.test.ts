import { afterEach, describe, expect, it } from 'vitest';
import { expectError, pushDeclaration, startTestServer, type Decl, type DeclAttrs as Attrs, type TestServer } from './helpers.js';

/**
 * The second sync audit, end to end over the real server and SQLite file: each case
 * asserts the dry run, the refusal or the push, and the data afterwards.
 */

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const push = (decl: Decl, opts: Parameters<typeof pushDeclaration>[2] = {}) => pushDeclaration(s!, decl, opts);
const one = (object: string, attributes: Attrs): Decl => ({ objects: { [object]: { attributes } }, views: {} });

async function create(object: string, values: Record<string, unknown>): Promise<string> {
  const r = await s!.call('POST', `/records/${object}`, { body: values });
  expect(r.status, r.text).toBe(201);
  return r.body.data.id as string;
}
const values = async (object: string, id: string) => (await s!.call('GET', `/records/${object}/${id}`)).body.data.values;

describe('sync conflicts the plan used to miss', () => {
  it('text → integer under required: the value that cannot convert is a required conflict; with a default it is filled after converting', async () => {
    s = await startTestServer();
    expect((await push(one('u', { k: { type: 'text', required: true } }))).status).toBe(200);
    const a = await create('u', { k: '12' });
    const b = await create('u', { k: 'abc' });
    const after = one('u', { k: { type: 'integer', required: true } });
    const dry = (await push(after, { dryRun: true })).body.data.plan;
    expect(dry.conflicts).toEqual([expect.objectContaining({ code: 'SCHEMA_SYNC_CONFLICT', target: 'u.k', rule: 'required', count: 1, sampleIds: [b] })]);
    expectError(await push(after, { allowDestructive: ['u.k'] }), { status: 409, code: 'SCHEMA_SYNC_CONFLICT' });
    expect(await values('u', b)).toEqual({ k: 'abc' });

    const filled = one('u', { k: { type: 'integer', required: true, default: 0 } });
    const plan = (await push(filled, { dryRun: true })).body.data.plan;
    expect(plan.conflicts).toEqual([]);
    expect(plan.steps).toEqual([expect.objectContaining({ target: 'u.k', destructive: true, affected: 1, backfill: 1 })]);
    expect((await push(filled, { allowDestructive: ['u.k'] })).status).toBe(200);
    expect([await values('u', a), await values('u', b)]).toEqual([{ k: 12 }, { k: 0 }]);
  });

  it('renamedFrom onto an attribute that exists at runtime is a 409 naming the clash; the data stays', async () => {
    s = await startTestServer();
    await push(one('item', { amount: { type: 'number' } }));
    const id = await create('item', { amount: 42 });
    expect((await s.call('POST', '/schema/objects/item/attributes', { body: { name: 'qty', type: 'number' } })).status).toBe(201);
    const after = one('item', { qty: { type: 'number', renamedFrom: 'amount' } });
    const dry = (await push(after, { dryRun: true })).body.data.plan;
    expect(dry.conflicts).toEqual([expect.objectContaining({ code: 'SCHEMA_SYNC_CONFLICT', target: 'item.qty', rule: 'rename_clash' })]);
    expect(dry.conflicts[0].fix).toMatch(/remove renamedFrom/);
    expectError(await push(after, { allowDestructive: true }), { status: 409, code: 'SCHEMA_SYNC_CONFLICT' });
    expect(await values('item', id)).toEqual({ amount: 42, qty: null });
  });

  it('renamedFrom onto an object that exists at runtime is a 409; the old object keeps its records', async () => {
    s = await startTestServer();
    await push(one('old', { v: { type: 'text' } }));
    const id = await create('old', { v: 'keep' });
    await s.defineObject('neu', [{ name: 'v', type: 'text' }]);
    const after: Decl = { objects: { neu: { renamedFrom: 'old', attributes: { v: { type: 'text' } } } }, views: {} };
    expectError(await push(after, { allowDestructive: true }), { status: 409, code: 'SCHEMA_SYNC_CONFLICT' });
    expect(await values('old', id)).toEqual({ v: 'keep' });
  });

  it('the dry run lists the unique conflict next to the length conflict of the same attribute', async () => {
    s = await startTestServer();
    await push(one('c', { s: { type: 'text' } }));
    await create('c', { s: 'hello' });
    await create('c', { s: 'hello' });
    const rules = async (spec: Record<string, unknown>) =>
      (await push(one('c', { s: spec }), { dryRun: true })).body.data.plan.conflicts.map((c: { rule: string; count: number }) => `${c.rule} ${c.count}`).sort();
    expect(await rules({ type: 'text', unique: true, maxLength: 3 })).toEqual(['length 2', 'unique 2']);
    expect(await rules({ type: 'text', unique: true, maxLength: 3, pattern: '^[0-9]+$' })).toEqual(['length 2', 'pattern 2', 'unique 2']);
  });

  it('adding an attribute with a default says how many records receive it', async () => {
    s = await startTestServer();
    await push(one('o', { v: { type: 'text' } }));
    for (const v of ['1', '2', '3']) await create('o', { v });
    const after = one('o', { v: { type: 'text' }, n: { type: 'text', default: 'filled' } });
    const plan = (await push(after, { dryRun: true })).body.data.plan;
    expect(plan.steps).toEqual([
      expect.objectContaining({ action: 'add_attribute', target: 'o.n', destructive: false, affected: 3, reason: 'fills 3 records with the default' }),
    ]);
    expect((await push(after)).status).toBe(200);
  });
});
