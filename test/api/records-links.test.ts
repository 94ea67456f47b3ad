import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// Deleting records that others link to, over real HTTP and a real SQLite file: the rule is
// "nothing points at a missing record" (contract.md §3), for any number of linking records,
// self relations and lists included, and a required link left empty refuses the delete.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s.close());

type Rec = { id: string; version: number; values: Record<string, unknown> };
const create = async (name: string, values: Record<string, unknown>): Promise<Rec> => {
  const r = await s.call('POST', `/records/${name}`, { body: values });
  expect(r.status).toBe(201);
  return r.body.data;
};
const bulkCreate = async (name: string, records: Record<string, unknown>[]): Promise<Rec[]> => {
  const r = await s.call('POST', `/records/${name}/bulk-create`, { body: { records } });
  expect(r.status).toBe(201);
  return r.body.data.records;
};
const get = async (name: string, id: string): Promise<Rec> => (await s.call('GET', `/records/${name}/${id}`)).body.data;
const bulkDelete = (name: string, ids: string[]) => s.call('POST', `/records/${name}/bulk-delete`, { body: { ids } });
const total = async (name: string) => (await s.call('POST', `/records/${name}/search`, { body: { limit: 1 } })).body.page.total as number;

describe('deleting linked records', () => {
  it('a self relation: deleting a parent with five of its six children clears the sixth', async () => {
    await s.defineObject('node', [{ name: 'name', type: 'text' }, { name: 'parent', type: 'relation', target: 'node' }]);
    const root = await create('node', { name: 'root' });
    const kids = await bulkCreate('node', Array.from({ length: 6 }, (_, i) => ({ name: `kid${i}`, parent: root.id })));
    const d = await bulkDelete('node', [root.id, ...kids.slice(0, 5).map((k) => k.id)]);
    expect(d.body).toEqual({ success: true, data: { deleted: 6 } });
    const k5 = await get('node', kids[5]!.id);
    expect(k5.values['parent']).toBeNull();
    expect(k5.version).toBe(2);
    expect(await total('node')).toBe(1);
  });

  it('a required self relation: 409 while any survivor needs a deleted record, nothing deleted; fine once none does', async () => {
    await s.defineObject('rnode', [{ name: 'name', type: 'text' }, { name: 'boss', type: 'relation', target: 'rnode' }]);
    const root = await create('rnode', { name: 'root' });
    expect((await s.call('PUT', `/records/rnode/${root.id}`, { body: { boss: root.id }, headers: { 'if-match': '*' } })).status).toBe(200);
    expect((await s.call('PUT', '/schema/objects/rnode/attributes/boss', { body: { required: true } })).status).toBe(200);
    const kids = await bulkCreate('rnode', Array.from({ length: 6 }, (_, i) => ({ name: `kid${i}`, boss: root.id })));

    expectError(await s.call('DELETE', `/records/rnode/${root.id}`), { status: 409, code: 'SCHEMA_CONFLICT' });
    const r = await bulkDelete('rnode', [root.id, ...kids.slice(0, 5).map((k) => k.id)]);
    expectError(r, { status: 409, code: 'SCHEMA_CONFLICT' });
    expect(r.body.message).toContain(kids[5]!.id);
    expect(await total('rnode')).toBe(7);
    expect((await get('rnode', kids[5]!.id)).values['boss']).toBe(root.id);

    // Root links to itself: deleting it with every record that needs it is allowed.
    expect((await bulkDelete('rnode', [root.id, ...kids.map((k) => k.id)])).body.data).toEqual({ deleted: 7 });
  });

  it('a multi-valued self relation: more than five linkers lose the deleted ids, order kept, one version each', async () => {
    await s.defineObject('peer', [
      { name: 'name', type: 'text' },
      { name: 'friends', type: 'relation', target: 'peer', multiple: true },
    ]);
    const [a, b, c] = await bulkCreate('peer', [{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    const fans = await bulkCreate('peer', Array.from({ length: 7 }, (_, i) => ({ name: `fan${i}`, friends: [c!.id, a!.id, b!.id] })));
    const d = await bulkDelete('peer', [a!.id, ...fans.slice(0, 5).map((f) => f.id)]);
    expect(d.body.data).toEqual({ deleted: 6 });
    for (const f of fans.slice(5)) {
      const after = await get('peer', f.id);
      expect(after.values['friends']).toEqual([c!.id, b!.id]);
      expect(after.version).toBe(2);
    }

  });

  it('a required list: 409 when a delete would leave it empty, nothing deleted; fine while one id survives', async () => {
    await s.defineObject('member', [{ name: 'name', type: 'text' }]);
    await s.defineObject('team', [{ name: 'name', type: 'text' }, { name: 'members', type: 'relation', target: 'member', multiple: true, required: true }]);
    const [a, b] = await bulkCreate('member', [{ name: 'a' }, { name: 'b' }]);
    const teams = await bulkCreate('team', Array.from({ length: 7 }, (_, i) => ({ name: `t${i}`, members: [a!.id, b!.id] })));
    expect((await bulkDelete('member', [a!.id])).status).toBe(200);
    const r = await bulkDelete('member', [b!.id]);
    expectError(r, { status: 409, code: 'SCHEMA_CONFLICT' });
    expect(await total('member')).toBe(1);
    for (const t of teams) expect((await get('team', t.id)).values['members']).toEqual([b!.id]);
  });

  it('a record linking to a deleted record through two attributes moves one version', async () => {
    await s.defineObject('par', [{ name: 'name', type: 'text' }]);
    await s.defineObject('kid', [
      { name: 'name', type: 'text' },
      { name: 'p', type: 'relation', target: 'par' },
      { name: 'pm', type: 'relation', target: 'par', multiple: true },
      { name: 'other', type: 'relation', target: 'par' },
    ]);
    const [p0, p1, p2] = await bulkCreate('par', [{ name: 'p0' }, { name: 'p1' }, { name: 'p2' }]);
    const k = await create('kid', { name: 'k', p: p0!.id, pm: [p2!.id, p0!.id], other: p1!.id });
    const bystander = await create('kid', { name: 'b', p: p1!.id });
    expect((await s.call('DELETE', `/records/par/${p0!.id}`)).status).toBe(200);
    const after = await get('kid', k.id);
    expect(after.values).toMatchObject({ p: null, pm: [p2!.id], other: p1!.id });
    expect(after.version).toBe(2);
    // A record that links only to survivors is not touched.
    expect((await get('kid', bystander.id)).version).toBe(1);
  });
});

describe('relation targets must exist, unique relations too', () => {
  // A unique relation (one-to-one) was left to the unique index, which cannot know whether
  // the target exists: creates stored links to nothing.
  it('create and bulk-create refuse a unique relation naming a missing record; nothing is written', async () => {
    await s.defineObject('person', [{ name: 'name', type: 'text' }]);
    await s.defineObject('badge', [
      { name: 'holder', type: 'relation', target: 'person', unique: true },
      { name: 'backup', type: 'relation', target: 'person' },
    ]);
    const ann = await create('person', { name: 'ann' });
    const ghost = crypto.randomUUID();
    expectError(await s.call('POST', '/records/badge', { body: { holder: ghost } }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    const bulk = await s.call('POST', '/records/badge/bulk-create', { body: { records: [{ holder: ann.id }, { holder: ghost, backup: ghost }] } });
    expectError(bulk, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(bulk.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([
      ['records', 1, 'holder'],
      ['records', 1, 'backup'],
    ]);
    expect(await total('badge')).toBe(0);
    // A missing target and a taken unique value in one batch: both named.
    const held = await create('badge', { holder: ann.id });
    const both = await s.call('POST', '/records/badge/bulk-create', { body: { records: [{ holder: ann.id }, { holder: ghost }] } });
    expect(both.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([
      ['records', 0, 'holder'],
      ['records', 1, 'holder'],
    ]);
    expect(await total('badge')).toBe(1);
    expect((await get('badge', held.id)).values['holder']).toBe(ann.id);
  });
});
