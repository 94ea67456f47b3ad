import { afterEach, describe, expect, it } from 'vitest';
import { pendingOnPostgres } from '../support/backend.js';
import { expectError, pushDeclaration, startTestServer, type Decl, type TestServer } from './helpers.js';

/**
 * Sync rules the audit found unsafe, end to end against the real server and SQLite file:
 * each asserts the dry run, the refusal or the push, and the data afterwards.
 */

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const push = (decl: Decl, opts: Parameters<typeof pushDeclaration>[2] = {}) => pushDeclaration(s!, decl, opts);

async function create(object: string, values: Record<string, unknown>): Promise<string> {
  const r = await s!.call('POST', `/records/${object}`, { body: values });
  expect(r.status, r.text).toBe(201);
  return r.body.data.id as string;
}
const values = async (object: string, id: string) => (await s!.call('GET', `/records/${object}/${id}`)).body.data.values;

async function upload(path: string): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from('%PDF')], { type: 'application/pdf' }), 'a.pdf');
  const res = await fetch(s!.base + path, { method: 'POST', headers: { authorization: `Bearer ${s!.ownerKey}` }, body: form });
  return { status: res.status, body: JSON.parse(await res.text()) };
}

describe('losses the plan used to hide', () => {
  it.skipIf(pendingOnPostgres('documents: the PostgreSQL store has no files API yet (503)'))('document → text is destructive with the attached document count; refused without the flag, documents kept', async () => {
    s = await startTestServer();
    const decl: Decl = { objects: { deal: { attributes: { title: { type: 'text' }, files: { type: 'document', multiple: true } } } }, views: {} };
    expect((await push(decl)).status).toBe(200);
    const id = await create('deal', { title: 't' });
    for (let i = 0; i < 2; i++) expect((await upload(`/upload/deal/${id}/files`)).status).toBe(201);
    const after = structuredClone(decl);
    after.objects.deal!.attributes.files = { type: 'text' };
    const dry = await push(after, { dryRun: true });
    expect(dry.body.data.plan.steps).toEqual([expect.objectContaining({ action: 'change_attribute', target: 'deal.files', destructive: true, affected: 2 })]);
    expectError(await push(after), { status: 500, code: 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED' });
    expect((await values('deal', id)).files).toHaveLength(2);
    expect((await push(after, { allowDestructive: ['deal.files'] })).status).toBe(200);
  });

  it('datetime → date and text → integer count altered values; allowed, they convert', async () => {
    s = await startTestServer();
    const decl: Decl = { objects: { deal: { attributes: { closed: { type: 'datetime' }, zip: { type: 'text' } } } }, views: {} };
    await push(decl);
    const a = await create('deal', { closed: '2026-03-01T10:30:00Z', zip: '00501' });
    await create('deal', { closed: '2026-03-01T00:00:00Z', zip: '501' });
    const after = structuredClone(decl);
    after.objects.deal!.attributes = { closed: { type: 'date' }, zip: { type: 'integer' } };
    const plan = (await push(after, { dryRun: true })).body.data.plan;
    expect(plan.steps.map((x: { target: string; destructive: boolean; affected?: number }) => `${x.target} ${x.destructive} ${x.affected}`)).toEqual([
      'deal.closed true 1',
      'deal.zip true 1',
    ]);
    expect(plan.steps[0].sampleIds).toEqual([a]);
    expectError(await push(after), { status: 500, code: 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED' });
    expect(await values('deal', a)).toMatchObject({ closed: '2026-03-01T10:30:00.000Z', zip: '00501' });
    expect((await push(after, { allowDestructive: true })).status).toBe(200);
    expect(await values('deal', a)).toMatchObject({ closed: '2026-03-01', zip: 501 });
  });
});

describe('relation targets', () => {
  const crm = (): Decl => ({
    objects: {
      company: { attributes: { name: { type: 'text' } } },
      deal: { attributes: { title: { type: 'text' }, company: { type: 'relation', target: 'company' } } },
    },
    views: {},
  });

  it.each([['organization'], ['company']])('renaming company → organization keeps deal links (target: %s)', async (target) => {
    s = await startTestServer();
    await push(crm());
    const c = await create('company', { name: 'Acme' });
    const d = await create('deal', { title: 't', company: c });
    const after = crm();
    after.objects.organization = { ...after.objects.company!, renamedFrom: 'company' };
    delete after.objects.company;
    after.objects.deal!.attributes.company = { type: 'relation', target };
    const res = await push(after);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.plan.steps.map((x: { action: string }) => x.action)).toEqual(['rename_object']);
    expect((await values('deal', d)).company).toBe(c);
    expect((await values('organization', c)).name).toBe('Acme');
    const attr = (await s.call('GET', '/schema/objects/deal')).body.data.attributes.find((x: { name: string }) => x.name === 'company');
    expect(attr.target).toBe('organization');
    // pushing the same declaration again: nothing to do
    expect((await push(after, { dryRun: true })).body.data.plan.steps).toEqual([]);
  });

  it('a relation to an object neither declared nor stored: 409 with the dry run showing it, store unchanged', async () => {
    s = await startTestServer();
    await push(crm());
    const after = crm();
    after.objects.deal!.attributes.owner = { type: 'relation', target: 'person' };
    const dry = await push(after, { dryRun: true });
    expect(dry.body.data.plan.conflicts).toEqual([
      expect.objectContaining({ code: 'SCHEMA_SYNC_CONFLICT', target: 'deal.owner', rule: 'missing_target' }),
    ]);
    const res = await push(after);
    expectError(res, { status: 409, code: 'SCHEMA_SYNC_CONFLICT' });
    expect(res.body.message).toMatch(/deal\.owner .*person/);
    expect((await s.call('GET', '/schema/sources/crm')).body.data.version).toBe(1);
  });

  it('PUT /schema/objects/:o/attributes/:id refuses a target change over links (the same rule as the planner)', async () => {
    s = await startTestServer();
    const decl = crm();
    decl.objects.person = { attributes: { name: { type: 'text' } } };
    await push(decl);
    const c = await create('company', { name: 'Acme' });
    const d = await create('deal', { title: 't', company: c });
    const res = await s.call('PUT', '/schema/objects/deal/attributes/company', { body: { target: 'person' } });
    expectError(res, { status: 400, code: 'SCHEMA_VALIDATION_FAILED' });
    expect(res.body.message).toContain(d);
    const attr = (await s.call('GET', '/schema/objects/deal')).body.data.attributes.find((x: { name: string }) => x.name === 'company');
    expect(attr.target).toBe('company');
    // with no links the change is fine
    const cleared = await s.call('PUT', `/records/deal/${d}`, { body: { company: null }, headers: { 'if-match': '*' } });
    expect(cleared.status, cleared.text).toBe(200);
    const ok = await s.call('PUT', '/schema/objects/deal/attributes/company', { body: { target: 'person' } });
    expect(ok.status, ok.text).toBe(200);
  });
});

describe('required with a default', () => {
  it('an existing attribute made required with a default fills its nulls in the push', async () => {
    s = await startTestServer();
    const decl: Decl = { objects: { deal: { attributes: { title: { type: 'text' }, stage: { type: 'text' } } } }, views: {} };
    await push(decl);
    const a = await create('deal', { title: 'a', stage: 'won' });
    const b = await create('deal', { title: 'b' });
    const c = await create('deal', { title: 'c' });
    const after = structuredClone(decl);
    after.objects.deal!.attributes.stage = { type: 'text', required: true, default: 'lead' };
    const dry = (await push(after, { dryRun: true })).body.data.plan;
    expect(dry.conflicts).toEqual([]);
    expect(dry.steps).toEqual([expect.objectContaining({ action: 'change_attribute', backfill: 2, affected: 2, destructive: false })]);
    expect((await push(after)).status).toBe(200);
    expect([(await values('deal', a)).stage, (await values('deal', b)).stage, (await values('deal', c)).stage]).toEqual(['won', 'lead', 'lead']);
  });

  it('unique: the one empty value may not take a default another record holds; a conflict, not a failed apply', async () => {
    s = await startTestServer();
    const decl: Decl = { objects: { deal: { attributes: { stage: { type: 'text' } } } }, views: {} };
    await push(decl);
    const held = await create('deal', { stage: 'lead' });
    const empty = await create('deal', {});
    const after = structuredClone(decl);
    after.objects.deal!.attributes.stage = { type: 'text', required: true, unique: true, default: 'lead' };
    const r = await push(after);
    expectError(r, { status: 409, code: 'SCHEMA_SYNC_CONFLICT' });
    expect((await push(after, { dryRun: true })).body.data.plan.conflicts).toEqual([
      expect.objectContaining({ rule: 'unique', count: 2, sampleIds: [empty, held] }),
    ]);
    expect((await values('deal', empty)).stage).toBeNull();
    // the same rule on PUT …/attributes/:id
    expectError(await s.call('PUT', '/schema/objects/deal/attributes/stage', { body: { required: true, unique: true, default: 'lead' } }), {
      status: 400,
      code: 'SCHEMA_VALIDATION_FAILED',
      message: /share their value of deal\.stage/,
    });
    // another default is taken once: filled
    after.objects.deal!.attributes.stage!.default = 'new';
    expect((await push(after)).status).toBe(200);
    expect((await values('deal', empty)).stage).toBe('new');
  });
});

describe('the recorded declaration', () => {
  it('a push with no steps still records the declaration it was given', async () => {
    s = await startTestServer();
    const decl: Decl = { objects: { deal: { attributes: { title: { type: 'text' } } } }, views: {} };
    await push(decl);
    const next = structuredClone(decl);
    next.objects.deal!.attributes.title = { type: 'text', renamedFrom: 'name' };
    const res = await push(next);
    expect(res.body.data).toMatchObject({ applied: true, version: 1 });
    expect(res.body.data.plan.steps).toEqual([]);
    const src = (await s.call('GET', '/schema/sources/crm')).body.data;
    expect(src.version).toBe(1);
    expect(src.declaration.objects.deal.attributes.title).toEqual({ type: 'text', renamedFrom: 'name' });
  });
});
