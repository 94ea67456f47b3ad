import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { expectError, openTempStore, startTestServer, type TestServer } from './helpers.js';

/**
 * The sync engine end to end (issue 4 "Tests"): declaration before, data, declaration
 * after → plan steps, codes, counts, and the store afterwards, against the real server
 * over a real SQLite file.
 */
type Decl = { objects: Record<string, { label?: string; renamedFrom?: string; attributes: Record<string, Record<string, unknown>> }>; views: Record<string, Record<string, unknown>> };

const base = (): Decl => ({
  objects: {
    company: { attributes: { name: { type: 'text', required: true } } },
    deal: {
      attributes: {
        title: { type: 'text', required: true },
        stage: { type: 'select', options: ['lead', 'won', 'lost'] },
        amount: { type: 'integer' },
        company: { type: 'relation', target: 'company' },
      },
    },
  },
  views: { open_deals: { object: 'deal', filter: { stage: 'lead' }, columns: ['title'] } },
});

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

async function push(decl: Decl, opts: { dryRun?: boolean; allowDestructive?: boolean | string[]; ifMatch?: number } = {}) {
  const { ifMatch, ...body } = opts;
  return s!.call('PUT', '/schema/sources/crm', { body: { declaration: decl, ...body }, ...(ifMatch !== undefined ? { headers: { 'if-match': `"${ifMatch}"` } } : {}) });
}

async function seed(n: number, values: (i: number) => Record<string, unknown>): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await s!.call('POST', '/records/deal', { body: values(i) });
    expect(r.status, r.text).toBe(201);
    ids.push(r.body.data.id);
  }
  return ids;
}

/** A second connection on the server's SQLite file, for state no route sets (owners, protected flags). */
function sql(statement: string, ...args: unknown[]): void {
  const db = new Database(join(s!.dataDir, 'schemasync.db'));
  try {
    db.prepare(statement).run(...args);
  } finally {
    db.close();
  }
}

async function upload(object: string, id: string, attribute: string): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from('%PDF')], { type: 'application/pdf' }), 'a.pdf');
  const res = await fetch(`${s!.base}/upload/${object}/${id}/${attribute}`, { method: 'POST', headers: { authorization: `Bearer ${s!.ownerKey}` }, body: form });
  expect(res.status, await res.text()).toBe(201);
}

async function link(ids: string[]): Promise<string> {
  const c = await s!.call('POST', '/records/company', { body: { name: 'Acme' } });
  for (const id of ids) {
    const r = await s!.call('PUT', `/records/deal/${id}`, { body: { company: c.body.data.id }, headers: { 'if-match': '*' } });
    expect(r.status, r.text).toBe(200);
  }
  return c.body.data.id as string;
}

const value = async (object: string, id: string, attribute: string) => (await s!.call('GET', `/records/${object}/${id}`)).body.data.values[attribute];

const brief = (plan: { steps: { action: string; target: string; destructive: boolean; affected?: number }[] }) =>
  plan.steps.map((x) => `${x.action} ${x.target}${x.destructive ? ` !${x.affected ?? 0}` : ''}`);

interface Scenario {
  name: string;
  /** Changes to the first declaration (pushed before the data is created). */
  before?: (d: Decl) => void;
  after: (d: Decl) => void;
  data: (i: number) => Record<string, unknown>;
  /** More data or out-of-band state after the records exist (uploads, links, protected flags). */
  prepare?: (ids: string[]) => Promise<void>;
  steps?: string[];
  code?: string;
  status?: number;
  /** count undefined: a rule without record counts (protected, missing target). */
  conflict?: { rule?: string; count?: number };
  allow?: boolean | string[];
  /** After a successful push: check the store. */
  check?: (ids: string[]) => Promise<void>;
}

const scenarios: Scenario[] = [
  {
    name: 'add an attribute (additive)',
    after: (d) => { d.objects.deal!.attributes.note = { type: 'text' }; },
    data: () => ({ title: 't' }),
    steps: ['add_attribute deal.note'],
    check: async (ids) => expect((await s!.call('GET', `/records/deal/${ids[0]}`)).body.data.values.title).toBe('t'),
  },
  {
    name: 'widen integer → number in place',
    after: (d) => { d.objects.deal!.attributes.amount = { type: 'number' }; },
    data: (i) => ({ title: 't', amount: i }),
    steps: ['change_attribute deal.amount'],
    check: async (ids) => expect((await s!.call('GET', `/records/deal/${ids[2]}`)).body.data.values.amount).toBe(2),
  },
  {
    name: 'rename an attribute keeps its values',
    after: (d) => { const t = d.objects.deal!.attributes.title!; delete d.objects.deal!.attributes.title; d.objects.deal!.attributes.headline = { ...t, renamedFrom: 'title' }; d.views.open_deals!.columns = ['headline']; },
    data: (i) => ({ title: `t${i}` }),
    steps: ['rename_attribute deal.headline', 'change_view view:open_deals'],
    check: async (ids) => expect((await s!.call('GET', `/records/deal/${ids[1]}`)).body.data.values.headline).toBe('t1'),
  },
  {
    name: 'rename an object keeps its records',
    after: (d) => { d.objects.opportunity = { ...d.objects.deal!, renamedFrom: 'deal' }; delete d.objects.deal; d.views.open_deals!.object = 'opportunity'; },
    data: (i) => ({ title: `t${i}` }),
    steps: ['rename_object opportunity', 'change_view view:open_deals'],
    check: async (ids) => expect((await s!.call('GET', `/records/opportunity/${ids[0]}`)).body.data.values.title).toBe('t0'),
  },
  {
    name: 'drop an attribute with data is destructive',
    after: (d) => { delete d.objects.deal!.attributes.amount; },
    data: (i) => ({ title: 't', amount: i === 0 ? null : i }),
    steps: ['drop_attribute deal.amount !2'],
    code: 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED', status: 500,
  },
  {
    name: 'drop an attribute with data, allowed by target',
    after: (d) => { delete d.objects.deal!.attributes.amount; },
    data: (i) => ({ title: 't', amount: i }),
    steps: ['drop_attribute deal.amount !3'],
    allow: ['deal.amount'],
    check: async () => {
      const o = (await s!.call('GET', '/schema/objects/deal')).body.data;
      expect(o.attributes.map((a: { name: string }) => a.name)).not.toContain('amount');
    },
  },
  {
    name: 'an allow list that names another target does not cover the loss',
    after: (d) => { delete d.objects.deal!.attributes.amount; },
    data: (i) => ({ title: 't', amount: i }),
    allow: ['deal.stage'],
    code: 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED', status: 500,
  },
  {
    name: 'lossy type change is destructive with the unconvertible count',
    after: (d) => { d.objects.deal!.attributes.title = { type: 'integer' }; },
    data: (i) => ({ title: i === 0 ? '12' : 'abc' }),
    steps: ['change_attribute deal.title !2'],
    code: 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED', status: 500,
  },
  {
    name: 'required over nulls',
    after: (d) => { d.objects.deal!.attributes.amount = { type: 'integer', required: true }; },
    data: (i) => ({ title: 't', amount: i === 0 ? 5 : null }),
    code: 'SCHEMA_SYNC_CONFLICT', status: 409, conflict: { rule: 'required', count: 2 },
  },
  {
    name: 'unique over duplicates',
    after: (d) => { d.objects.deal!.attributes.title = { type: 'text', required: true, unique: true }; },
    data: () => ({ title: 'same' }),
    code: 'SCHEMA_SYNC_CONFLICT', status: 409, conflict: { rule: 'unique', count: 3 },
  },
  {
    name: 'removed select option in use',
    after: (d) => { d.objects.deal!.attributes.stage = { type: 'select', options: ['lead'] }; },
    data: (i) => ({ title: 't', stage: i === 0 ? 'lead' : 'won' }),
    code: 'SCHEMA_SYNC_CONFLICT', status: 409, conflict: { rule: 'options', count: 2 },
  },
  {
    name: 'maxLength below stored lengths',
    after: (d) => { d.objects.deal!.attributes.title = { type: 'text', required: true, maxLength: 3 }; },
    data: (i) => ({ title: i === 0 ? 'ok' : 'too long' }),
    code: 'SCHEMA_SYNC_CONFLICT', status: 409, conflict: { rule: 'length', count: 2 },
  },
  {
    name: 'dropping an object that a remaining relation targets',
    after: (d) => { delete d.objects.company; },
    data: () => ({ title: 't' }),
    code: 'SCHEMA_OBJECT_REFERENCED', status: 409,
  },
  {
    name: 'min/max that stored values break',
    after: (d) => { d.objects.deal!.attributes.amount = { type: 'integer', min: 1, max: 1 }; },
    data: (i) => ({ title: 't', amount: i }),
    code: 'SCHEMA_SYNC_CONFLICT', status: 409, conflict: { rule: 'range', count: 2 },
  },
  {
    name: 'a pattern that stored values break',
    after: (d) => { d.objects.deal!.attributes.title = { type: 'text', required: true, pattern: '^t[0-9]$' }; },
    data: (i) => ({ title: i === 0 ? 't0' : 'bad' }),
    code: 'SCHEMA_SYNC_CONFLICT', status: 409, conflict: { rule: 'pattern', count: 2 },
  },
  {
    name: 'single-file over records holding several',
    before: (d) => { d.objects.deal!.attributes.files = { type: 'document', multiple: true }; },
    after: (d) => { d.objects.deal!.attributes.files = { type: 'document', multiple: false }; },
    data: () => ({ title: 't' }),
    prepare: async (ids) => {
      for (const id of ids.slice(0, 2)) for (let k = 0; k < 2; k++) await upload('deal', id, 'files');
      await upload('deal', ids[2]!, 'files');
    },
    code: 'SCHEMA_SYNC_CONFLICT', status: 409, conflict: { rule: 'multiple', count: 2 },
  },
  {
    name: 'a relation target change over existing links',
    before: (d) => { d.objects.person = { attributes: { name: { type: 'text' } } }; },
    after: (d) => { d.objects.deal!.attributes.company = { type: 'relation', target: 'person' }; },
    data: () => ({ title: 't' }),
    prepare: async (ids) => void (await link(ids.slice(0, 2))),
    code: 'SCHEMA_SYNC_CONFLICT', status: 409, conflict: { rule: 'relation_target', count: 2 },
  },
  {
    name: 'a relation to an object neither declared nor stored',
    after: (d) => { d.objects.deal!.attributes.owner = { type: 'relation', target: 'person' }; },
    data: () => ({ title: 't' }),
    code: 'SCHEMA_SYNC_CONFLICT', status: 409, conflict: { rule: 'missing_target' },
  },
  {
    name: 'a change to a system-protected attribute',
    after: (d) => { d.objects.deal!.attributes.amount = { type: 'number' }; },
    data: (i) => ({ title: 't', amount: i }),
    prepare: async () => sql("UPDATE _ss_attributes SET protected = 1 WHERE name = 'amount'"),
    code: 'SCHEMA_SYNC_CONFLICT', status: 409, conflict: { rule: 'protected' },
  },
  {
    name: 'widen select → text in place',
    after: (d) => { d.objects.deal!.attributes.stage = { type: 'text' }; },
    data: (i) => ({ title: 't', stage: i === 0 ? 'won' : 'lead' }),
    steps: ['change_attribute deal.stage'],
    check: async (ids) => expect(await value('deal', ids[0]!, 'stage')).toBe('won'),
  },
  {
    name: 'allowDestructive: true applies every loss',
    before: (d) => { d.objects.deal!.attributes.note = { type: 'text' }; },
    after: (d) => { delete d.objects.deal!.attributes.amount; delete d.objects.deal!.attributes.note; },
    data: (i) => ({ title: 't', amount: i, note: 'n' }),
    steps: ['drop_attribute deal.amount !3', 'drop_attribute deal.note !3'],
    allow: true,
    check: async (ids) => {
      const keys = Object.keys((await s!.call('GET', `/records/deal/${ids[0]}`)).body.data.values);
      expect(keys).not.toContain('amount');
      expect(keys).not.toContain('note');
    },
  },
  ...(['core', 'bundle'] as const).map((kind): Scenario => ({
    name: `an object owned by ${kind} → SCHEMA_DUPLICATE_OBJECT`,
    after: () => {},
    data: () => ({ title: 't' }),
    prepare: async () => sql("UPDATE _ss_objects SET owner_kind = ?, owner_id = NULL WHERE name = 'company'", kind),
    code: 'SCHEMA_DUPLICATE_OBJECT', status: 409,
  })),
  {
    name: 'document → text is destructive with the attached documents',
    before: (d) => { d.objects.deal!.attributes.files = { type: 'document', multiple: true }; },
    after: (d) => { d.objects.deal!.attributes.files = { type: 'text' }; },
    data: () => ({ title: 't' }),
    prepare: async (ids) => { await upload('deal', ids[0]!, 'files'); await upload('deal', ids[0]!, 'files'); await upload('deal', ids[1]!, 'files'); },
    steps: ['change_attribute deal.files !3'],
    code: 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED', status: 500,
  },
  {
    name: 'datetime → date drops times: destructive with the altered count',
    before: (d) => { d.objects.deal!.attributes.closed = { type: 'datetime' }; },
    after: (d) => { d.objects.deal!.attributes.closed = { type: 'date' }; },
    data: (i) => ({ title: 't', closed: i === 0 ? '2026-01-01T00:00:00Z' : '2026-01-01T09:30:00Z' }),
    steps: ['change_attribute deal.closed !2'],
    code: 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED', status: 500,
  },
  {
    name: 'required with a default over nulls fills them',
    after: (d) => { d.objects.deal!.attributes.amount = { type: 'integer', required: true, default: 0 }; },
    data: (i) => ({ title: 't', amount: i === 0 ? 7 : null }),
    steps: ['change_attribute deal.amount'],
    check: async (ids) => expect([await value('deal', ids[0]!, 'amount'), await value('deal', ids[1]!, 'amount'), await value('deal', ids[2]!, 'amount')]).toEqual([7, 0, 0]),
  },
  {
    name: 'rename a relation target object; links follow',
    after: (d) => { d.objects.organization = { ...d.objects.company!, renamedFrom: 'company' }; delete d.objects.company; d.objects.deal!.attributes.company = { type: 'relation', target: 'organization' }; },
    data: () => ({ title: 't' }),
    prepare: async (ids) => void (await link(ids)),
    steps: ['rename_object organization'],
    check: async (ids) => {
      const c = await value('deal', ids[0]!, 'company');
      expect((await s!.call('GET', `/records/organization/${c}`)).body.data.values.name).toBe('Acme');
    },
  },
];

describe('PUT /schema/sources/:id scenario table', () => {
  it.each(scenarios)('$name', async (sc) => {
    s = await startTestServer();
    const first = base();
    sc.before?.(first);
    expect((await push(first)).status).toBe(200);
    const ids = await seed(3, sc.data);
    await sc.prepare?.(ids);
    const after = structuredClone(first);
    sc.after(after);

    const dry = await push(after, { dryRun: true });
    expect(dry.status, dry.text).toBe(200);
    const plan = dry.body.data.plan;
    if (sc.steps) expect(brief(plan)).toEqual(sc.steps);
    if (sc.conflict) {
      const c = plan.conflicts.find((x: { code: string }) => x.code === sc.code);
      expect(c, JSON.stringify(plan.conflicts)).toMatchObject({ ...(sc.conflict.count !== undefined ? { count: sc.conflict.count } : {}), ...(sc.conflict.rule ? { rule: sc.conflict.rule } : {}) });
      if (sc.conflict.count !== undefined) expect(c.sampleIds.length).toBe(Math.min(5, sc.conflict.count));
      expect(typeof c.fix).toBe('string');
    }

    const schemaBefore = (await s.call('GET', '/schema/objects')).body.data;
    const res = await push(after, sc.allow !== undefined ? { allowDestructive: sc.allow } : {});
    if (sc.code) {
      expectError(res, { status: sc.status!, code: sc.code });
      if (sc.status === 500) expect(res.body.message).toBe('Internal server error');
      // refused: nothing changed
      expect((await s.call('GET', '/schema/objects')).body.data).toEqual(schemaBefore);
      expect((await s.call('GET', '/schema/sources/crm')).body.data.version).toBe(1);
    } else {
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ applied: true, version: 2 });
      await sc.check?.(ids);
      // the declaration against its own result: zero steps
      const again = await push(after, { dryRun: true });
      expect(again.body.data.plan.steps).toEqual([]);
    }
  });
});

describe('sources: ownership, idempotence, if-match', () => {
  it('the same push twice is a no-op (version unchanged, zero steps)', async () => {
    s = await startTestServer();
    expect((await push(base())).body.data).toMatchObject({ version: 1, applied: true });
    const second = await push(base());
    expect(second.status).toBe(200);
    expect(second.body.data.plan.steps).toEqual([]);
    expect((await s.call('GET', '/schema/sources/crm')).body.data.version).toBe(1);
  });

  it('another source declaring the same object → SCHEMA_DUPLICATE_OBJECT; view → SCHEMA_DUPLICATE', async () => {
    s = await startTestServer();
    await push(base());
    const r = await s.call('PUT', '/schema/sources/billing', { body: { declaration: { objects: { company: { attributes: { name: { type: 'text' } } } }, views: {} } } });
    expectError(r, { status: 409, code: 'SCHEMA_DUPLICATE_OBJECT' });
    const v = await s.call('PUT', '/schema/sources/billing', { body: { declaration: { objects: { invoice: { attributes: { total: { type: 'number' } } } }, views: { open_deals: { object: 'invoice' } } } } });
    expectError(v, { status: 409, code: 'SCHEMA_DUPLICATE' });
  });

  it('runtime attributes on a source object are kept; a clashing declared type conflicts', async () => {
    s = await startTestServer();
    await push(base());
    expect((await s.call('POST', '/schema/objects/deal/attributes', { body: { name: 'scratch', type: 'text' } })).status).toBe(201);
    const again = await push(base(), { dryRun: true });
    expect(again.body.data.plan.steps).toEqual([]);
    const clash = base();
    clash.objects.deal!.attributes.scratch = { type: 'integer' };
    expectError(await push(clash), { status: 409, code: 'SCHEMA_SYNC_CONFLICT' });
    const adopt = base();
    adopt.objects.deal!.attributes.scratch = { type: 'text' };
    expect((await push(adopt)).status).toBe(200);
  });

  it('a stale if-match is SCHEMA_CONFLICT; the current one applies', async () => {
    s = await startTestServer();
    await push(base());
    const next = base();
    next.objects.deal!.attributes.note = { type: 'text' };
    expectError(await push(next, { ifMatch: 0 }), { status: 409, code: 'SCHEMA_CONFLICT' });
    expect((await push(next, { ifMatch: 1 })).body.data).toMatchObject({ version: 2, applied: true });
  });
});

describe('a crash mid-push', () => {
  it('leaves the old schema and data when the process dies inside the transaction', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ss-crash-'));
    const dbPath = join(dataDir, 'schemasync.db');
    {
      const store = await openTempStore(dataDir);
      await store.pushSource('crm', base() as never, {});
      const actor = { keyId: 'k', role: 'owner', scopes: null };
      await store.createRecord('deal', { title: 'kept', amount: 7 }, actor);
      await store.close();
    }
    // The child applies a push that renames, adds and drops; it SIGKILLs itself on the
    // second schema-changing statement, i.e. inside the push's transaction.
    const script = join(dataDir, 'crash.mjs');
    const storeUrl = new URL('../../dist/engine/store/index.js', import.meta.url).href;
    const sqliteUrl = pathToFileURL(createRequire(import.meta.url).resolve('better-sqlite3')).href;
    writeFileSync(script, `
      const { default: Database } = await import(${JSON.stringify(sqliteUrl)});
      const { openStore } = await import(${JSON.stringify(storeUrl)});
      let ddl = 0;
      const hook = (sql) => { if (/^\\s*(ALTER|CREATE|DROP|INSERT INTO)/i.test(sql) && ++ddl === 2) process.kill(process.pid, 'SIGKILL'); };
      const prep = Database.prototype.prepare;
      Database.prototype.prepare = function (sql) { hook(sql); return prep.call(this, sql); };
      const exec = Database.prototype.exec;
      Database.prototype.exec = function (sql) { hook(sql); return exec.call(this, sql); };
      const store = openStore({ path: ${JSON.stringify(dbPath)} });
      ddl = 0;
      const d = ${JSON.stringify(base())};
      d.objects.deal.attributes.note = { type: 'text' };
      d.objects.deal.attributes.headline = { ...d.objects.deal.attributes.title, renamedFrom: 'title' };
      delete d.objects.deal.attributes.title;
      d.views.open_deals.columns = ['headline'];
      d.objects.extra = { attributes: { x: { type: 'text' } } };
      await store.pushSource('crm', d, { allowDestructive: true });
      console.log('NOT KILLED');
    `);
    const { code, signal, out } = await new Promise<{ code: number | null; signal: string | null; out: string }>((res) => {
      const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (out += c));
      child.on('exit', (code, signal) => res({ code, signal, out }));
    });
    expect(signal, `code ${code}: ${out}`).toBe('SIGKILL');

    const store = await openTempStore(dataDir);
    try {
      expect((await store.findSource('crm'))?.version).toBe(1);
      expect(await store.findObject('extra')).toBeUndefined();
      const names = (await store.requireObject('deal')).attributes.map((a) => a.name);
      expect(names).toContain('title');
      expect(names).not.toContain('headline');
      const page = await store.search('deal', {});
      expect(page.records.map((r) => r.values)).toEqual([expect.objectContaining({ title: 'kept', amount: 7 })]);
    } finally {
      await store.close();
    }
  });
});
