import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../engine/errors.js';
import { openStore } from '../../engine/store/index.js';
import type { Actor, Store } from '../../engine/store/types.js';

/** The SQLite store over a real database file in a temp folder (issue 3 "Store"). */
let dir: string;
let store: Store;
const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };
const RUNTIME = { kind: 'runtime' } as const;

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServiceError) return err.code;
    throw err;
  }
  return undefined;
}

function errorOf(fn: () => unknown): ServiceError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServiceError) return err;
    throw err;
  }
  throw new Error('expected a ServiceError');
}

function crm(s: Store): void {
  s.createObject({ name: 'company', attributes: [{ name: 'name', type: 'text', required: true, unique: true }] }, RUNTIME);
  s.createObject(
    {
      name: 'deal',
      label: 'Deal',
      attributes: [
        { name: 'title', type: 'text', required: true, maxLength: 20 },
        { name: 'amount', type: 'number', min: 0 },
        { name: 'stage', type: 'select', options: ['lead', 'won', 'lost'], default: 'lead' },
        { name: 'tags', type: 'multiselect', options: ['a', 'b', 'c'] },
        { name: 'company', type: 'relation', target: 'company' },
        { name: 'closed', type: 'boolean' },
        { name: 'meta', type: 'json' },
      ],
    },
    RUNTIME,
  );
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ss-store-'));
  store = openStore({ path: join(dir, 'schemasync.db') });
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('store: schema', () => {
  it('creates objects with system attributes first, protected, and a STRICT table', () => {
    crm(store);
    const deal = store.requireObject('deal');
    expect(deal.attributes.slice(0, 6).map((a) => [a.name, a.system, a.protected])).toEqual([
      ['id', true, true],
      ['object', true, true],
      ['version', true, true],
      ['created_at', true, true],
      ['updated_at', true, true],
      ['created_by', true, true],
    ]);
    expect(deal.attributes.slice(6).map((a) => a.name)).toEqual(['title', 'amount', 'stage', 'tags', 'company', 'closed', 'meta']);
    expect(deal.owner).toEqual(RUNTIME);
    expect(store.findObject(deal.id)?.name).toBe('deal');
    const db = new Database(store.path, { readonly: true });
    const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'r_deal'").get() as { sql: string }).sql;
    db.close();
    expect(sql).toMatch(/STRICT$/);
  });

  it('refuses bad names, duplicates, unknown and protected things with the spec codes', () => {
    crm(store);
    expect(codeOf(() => store.createObject({ name: 'Bad-Name' }, RUNTIME))).toBe('SCHEMA_INVALID_OBJECT_NAME');
    expect(codeOf(() => store.createObject({ name: 'skill' }, RUNTIME))).toBe('SCHEMA_RESERVED_OBJECT_NAME');
    expect(codeOf(() => store.createObject({ name: 'deal' }, RUNTIME))).toBe('SCHEMA_DUPLICATE_OBJECT');
    expect(codeOf(() => store.addAttribute('deal', { name: 'Bad', type: 'text' }, RUNTIME))).toBe('SCHEMA_INVALID_ATTRIBUTE_NAME');
    expect(codeOf(() => store.addAttribute('deal', { name: 'created_at', type: 'text' }, RUNTIME))).toBe('SCHEMA_INVALID_ATTRIBUTE_NAME');
    expect(codeOf(() => store.addAttribute('deal', { name: 'title', type: 'text' }, RUNTIME))).toBe('SCHEMA_DUPLICATE_ATTRIBUTE');
    expect(codeOf(() => store.addAttribute('nope', { name: 'x', type: 'text' }, RUNTIME))).toBe('SCHEMA_OBJECT_NOT_FOUND');
    expect(codeOf(() => store.updateAttribute('deal', 'nope', { label: 'x' }))).toBe('SCHEMA_ATTRIBUTE_NOT_FOUND');
    expect(codeOf(() => store.updateAttribute('deal', 'version', { label: 'x' }))).toBe('SCHEMA_PROTECTED_ATTRIBUTE');
    expect(codeOf(() => store.deleteAttribute('deal', 'id'))).toBe('SCHEMA_PROTECTED_ATTRIBUTE');
    expect(codeOf(() => store.deleteObject('company'))).toBe('SCHEMA_OBJECT_REFERENCED');
    expect(codeOf(() => store.addAttribute('deal', { name: 'x', type: 'relation', target: 'ghost' }, RUNTIME))).toBe('SCHEMA_VALIDATION_FAILED');
    // renamedFrom is a declaration-file hint: the runtime inputs refuse it, never store or drop it.
    expect(codeOf(() => store.updateAttribute('deal', 'title', { label: 'L', renamedFrom: 'x' } as never))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(codeOf(() => store.addAttribute('deal', { name: 'y', type: 'text', renamedFrom: 'x' }, RUNTIME))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(codeOf(() => store.createObject({ name: 'z', attributes: [{ name: 'y', type: 'text', renamedFrom: 'x' }] }, RUNTIME))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(store.requireObject('deal').attributes.find((a) => a.name === 'title')?.label).toBeUndefined();
    expect(store.findObject('z')).toBeUndefined();
  });

  it('deleting a non-empty object needs force', () => {
    crm(store);
    store.createRecord('company', { name: 'Acme' }, actor);
    store.deleteAttribute('deal', 'company');
    expect(codeOf(() => store.deleteObject('company'))).toBe('SCHEMA_CONFLICT');
    store.deleteObject('company', { force: true });
    expect(store.findObject('company')).toBeUndefined();
  });

  it('refuses attribute changes that stored data breaks, naming rule, count and sample ids', () => {
    crm(store);
    const a = store.createRecord('deal', { title: 'a' }, actor);
    store.createRecord('deal', { title: 'a' }, actor);
    const err = errorOf(() => store.updateAttribute('deal', 'title', { unique: true }));
    expect(err.code).toBe('SCHEMA_VALIDATION_FAILED');
    expect(err.message).toContain('2 records');
    expect(err.message).toContain(a.id);
    expect(codeOf(() => store.updateAttribute('deal', 'amount', { required: true }))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(codeOf(() => store.updateAttribute('deal', 'title', { maxLength: 0 }))).toBe('SCHEMA_VALIDATION_FAILED');
    // A change the data satisfies applies, rename included, and keeps the values.
    const renamed = store.updateAttribute('deal', 'title', { name: 'heading', maxLength: 5 });
    expect(renamed.name).toBe('heading');
    expect(store.getRecord('deal', a.id).values['heading']).toBe('a');
  });

  it('a type change rebuilds the column and converts the values', () => {
    crm(store);
    // Fields the new type does not take are reported, not silently dropped.
    expect(codeOf(() => store.updateAttribute('deal', 'amount', { type: 'text' }))).toBe('SCHEMA_VALIDATION_FAILED');
    store.addAttribute('deal', { name: 'score', type: 'number', unique: true }, RUNTIME);
    const r = store.createRecord('deal', { title: 't', score: 42 }, actor);
    store.updateAttribute('deal', 'score', { type: 'text' });
    expect(store.getRecord('deal', r.id).values['score']).toBe('42');
    store.updateAttribute('deal', 'score', { type: 'integer' });
    expect(store.getRecord('deal', r.id).values['score']).toBe(42);
    store.createRecord('deal', { title: 'u', score: 7 }, actor);
    expect(store.search('deal', { filter: { score: { gt: 10 } } }).records.map((x) => x.id)).toEqual([r.id]);
    // The unique index came back with the rebuilt column.
    expect(codeOf(() => store.createRecord('deal', { title: 'v', score: 7 }, actor))).toBe('SCHEMA_VALIDATION_FAILED');
    const options = errorOf(() => store.updateAttribute('deal', 'score', { type: 'select', options: ['7'] }));
    expect(options.message).toContain('no longer among its options');
  });

  it('attributes named rowid and oid do not hide the rows a type change or a data check works on', () => {
    // Both names pass the name rule; SQLite would read them instead of its own row number.
    store.createObject({ name: 'ledger', attributes: [{ name: 'rowid', type: 'text' }, { name: 'oid', type: 'text' }, { name: 'amount', type: 'text' }] }, RUNTIME);
    const rows = [
      { rowid: 'same', oid: 'same', amount: '10' },
      { rowid: 'same', oid: 'x', amount: '20' },
      { rowid: null, oid: null, amount: '30' },
      { rowid: 'other', oid: 'same', amount: '40' },
    ].map((v) => store.createRecord('ledger', v, actor));
    store.updateAttribute('ledger', 'amount', { type: 'number' });
    expect(rows.map((r) => store.getRecord('ledger', r.id).values)).toEqual([
      { rowid: 'same', oid: 'same', amount: 10 },
      { rowid: 'same', oid: 'x', amount: 20 },
      { rowid: null, oid: null, amount: 30 },
      { rowid: 'other', oid: 'same', amount: 40 },
    ]);
    // Samples in a refusal are the oldest records first, by the real row order.
    const refused = errorOf(() => store.updateAttribute('ledger', 'rowid', { required: true }));
    expect(refused.message).toContain(rows[2]!.id);
  });
});

describe('store: records', () => {
  it('creates with defaults, version 1, and reads it back after a restart', () => {
    crm(store);
    const c = store.createRecord('company', { name: 'Acme' }, actor);
    const d = store.createRecord('deal', { title: 'Big', amount: 10, tags: ['a', 'b'], company: c.id, closed: true, meta: { k: [1] } }, actor);
    expect(d.version).toBe(1);
    expect(d.values).toEqual({ title: 'Big', amount: 10, stage: 'lead', tags: ['a', 'b'], company: c.id, closed: true, meta: { k: [1] } });
    store.close();
    store = openStore({ path: join(dir, 'schemasync.db') });
    expect(store.getRecord('deal', d.id)).toEqual(d);
  });

  it('reports every bad attribute, unknown attributes 404, system attributes 400', () => {
    crm(store);
    const err = errorOf(() => store.createRecord('deal', { amount: -1, stage: 'nope', closed: 'yes' }, actor));
    expect(err.code).toBe('SCHEMA_VALIDATION_FAILED');
    expect(err.details.errors?.map((e) => e.path[0]).sort()).toEqual(['amount', 'closed', 'stage', 'title']);
    expect(codeOf(() => store.createRecord('deal', { title: 'x', nope: 1 }, actor))).toBe('SCHEMA_ATTRIBUTE_NOT_FOUND');
    expect(codeOf(() => store.createRecord('deal', JSON.parse('{"title":"x","__proto__":{"polluted":1}}') as Record<string, unknown>, actor))).toBe(
      'SCHEMA_ATTRIBUTE_NOT_FOUND',
    );
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(codeOf(() => store.createRecord('deal', { title: 'x', version: 3 }, actor))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(codeOf(() => store.createRecord('deal', { title: 'x', company: '00000000-0000-4000-8000-000000000000' }, actor))).toBe('SCHEMA_VALIDATION_FAILED');
    store.createRecord('company', { name: 'Acme' }, actor);
    expect(codeOf(() => store.createRecord('company', { name: 'Acme' }, actor))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(codeOf(() => store.getRecord('deal', 'nope'))).toBe('SCHEMA_RECORD_NOT_FOUND');
  });

  it('updates with if-match: version +1, stale 409, at least one key', () => {
    crm(store);
    const d = store.createRecord('deal', { title: 'a' }, actor);
    const u = store.updateRecord('deal', d.id, { amount: 5 }, 1, actor);
    expect(u.version).toBe(2);
    expect(u.values['title']).toBe('a');
    expect(codeOf(() => store.updateRecord('deal', d.id, { amount: 6 }, 1, actor))).toBe('SCHEMA_CONFLICT');
    expect(store.updateRecord('deal', d.id, { amount: 6 }, '*', actor).version).toBe(3);
    expect(codeOf(() => store.updateRecord('deal', d.id, {}, '*', actor))).toBe('SCHEMA_VALIDATION_FAILED');
  });

  it('a create answers with every attribute in attribute order, one named like an Object.prototype key included', () => {
    store.createObject(
      {
        name: 'thing',
        attributes: [
          { name: 'constructor', type: 'text' },
          { name: 'label', type: 'text', default: 'none' },
          { name: 'parent', type: 'relation', target: 'thing' },
        ],
      },
      RUNTIME,
    );
    const [a, b] = store.bulkCreate('thing', [{ label: 'x' }, { constructor: 'c', label: null }], actor);
    expect(Object.keys(a!.values)).toEqual(['constructor', 'label', 'parent']);
    expect(a!.values).toEqual({ constructor: null, label: 'x', parent: null });
    expect(b!.values).toEqual({ constructor: 'c', label: null, parent: null });
    expect(JSON.parse(JSON.stringify(a!.values))).toEqual({ constructor: null, label: 'x', parent: null });
    expect(store.getRecord('thing', b!.id).values).toEqual({ constructor: 'c', label: null, parent: null });
    // The relation check reads the parsed values: a missing target is still named, by item.
    const err = errorOf(() => store.bulkCreate('thing', [{ label: 'y' }, { parent: crypto.randomUUID() }], actor));
    expect(err.details.errors?.map((e) => e.path)).toEqual([['records', 1, 'parent']]);
    expect(store.search('thing', {}).total).toBe(2);
  });

  it('a bulk write that fails changes nothing, and errors name the item index', () => {
    crm(store);
    const err = errorOf(() => store.bulkCreate('deal', [{ title: 'a' }, { title: 'b' }, { title: 'c', amount: -5 }], actor));
    expect(err.details.errors?.[0]?.path).toEqual(['records', 2, 'amount']);
    expect(store.search('deal', {}).total).toBe(0);
    const dup = errorOf(() => store.bulkCreate('company', [{ name: 'x' }, { name: 'x' }], actor));
    expect(dup.details.errors?.[0]?.path).toEqual(['records', 1, 'name']);
    expect(store.search('company', {}).total).toBe(0);
    const made = store.bulkCreate('deal', [{ title: 'a' }, { title: 'b' }], actor);
    expect(codeOf(() => store.bulkUpdate('deal', [{ id: made[0]!.id, values: { amount: 1 } }, { id: made[1]!.id, values: { amount: -1 } }], actor))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    );
    expect(store.getRecord('deal', made[0]!.id).values['amount']).toBeNull();
    expect(codeOf(() => store.bulkDelete('deal', ['not-a-uuid']))).toBe('SCHEMA_VALIDATION_FAILED');
    // bulk-create / bulk-update take up to 10,000 records; bulk-delete 1..1000 ids (contract.md §3).
    expect(codeOf(() => store.bulkCreate('deal', Array.from({ length: 10_001 }, () => ({ title: 'x' })), actor))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(codeOf(() => store.bulkDelete('deal', Array.from({ length: 1001 }, () => crypto.randomUUID())))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(store.search('deal', {}).total).toBe(2);
    expect(store.bulkDelete('deal', made.map((m) => m.id))).toEqual({ deleted: 2 });
  });

  it('deleting a linked record clears the links (and bumps the linking record)', () => {
    crm(store);
    const c = store.createRecord('company', { name: 'Acme' }, actor);
    const d = store.createRecord('deal', { title: 'a', company: c.id }, actor);
    store.deleteRecord('company', c.id);
    const after = store.getRecord('deal', d.id);
    expect(after.values['company']).toBeNull();
    expect(after.version).toBe(2);
  });
});

describe('store: document values (files hook)', () => {
  it('attaches uploaded documents, refuses foreign ids, and detaches on update and delete', async () => {
    const { Readable } = await import('node:stream');
    store.createObject({ name: 'contract', attributes: [{ name: 'title', type: 'text' }, { name: 'scans', type: 'document', multiple: true }] }, RUNTIME);
    const a = store.createRecord('contract', { title: 'a' }, actor);
    const b = store.createRecord('contract', { title: 'b' }, actor);
    const files = store.files!;
    const doc = await files.uploadDocument(
      { object: 'contract', recordId: a.id, attribute: 'scans' },
      { name: 'x.pdf', mimeType: 'application/pdf', stream: Readable.from([Buffer.from('%PDF')]) },
      actor,
    );
    expect(store.getRecord('contract', a.id).values['scans']).toEqual([doc.id]);
    // An id that names no document is reported on the attribute, and nothing changes.
    const err = errorOf(() => store.updateRecord('contract', b.id, { title: 'bb', scans: ['00000000-0000-4000-8000-000000000000'] }, '*', actor));
    expect(err.code).toBe('SCHEMA_VALIDATION_FAILED');
    expect(err.details.errors?.[0]?.path).toEqual(['scans']);
    expect(store.getRecord('contract', b.id).values['title']).toBe('b');
    store.updateRecord('contract', a.id, { scans: [] }, '*', actor);
    expect(codeOf(() => files.getDocument(doc.id))).toBe('DOCUMENT_NOT_FOUND_FOR_OPERATION');
    const again = await files.uploadDocument(
      { object: 'contract', recordId: a.id, attribute: 'scans' },
      { name: 'y.pdf', mimeType: 'application/pdf', stream: Readable.from([Buffer.from('%PDF2')]) },
      actor,
    );
    store.deleteRecord('contract', a.id);
    expect(codeOf(() => files.getDocument(again.id))).toBe('DOCUMENT_NOT_FOUND_FOR_OPERATION');
  });
});

describe('store: two connections on one file', () => {
  it('a schema change made by another process is seen without reopening', () => {
    crm(store);
    const other = openStore({ path: join(dir, 'schemasync.db'), filesDir: false });
    try {
      expect(store.requireObject('deal').attributes.some((a) => a.name === 'score')).toBe(false);
      other.addAttribute('deal', { name: 'score', type: 'integer' }, RUNTIME);
      const r = store.createRecord('deal', { title: 'x', score: 3 }, actor);
      expect(other.getRecord('deal', r.id).values['score']).toBe(3);
    } finally {
      other.close();
    }
  });
});

describe('store: unique values in bulk updates', () => {
  it('swapping unique values inside one batch is judged on the end state: it succeeds', () => {
    crm(store);
    const [a, b] = store.bulkCreate('company', [{ name: 'A' }, { name: 'B' }], actor);
    store.bulkUpdate('company', [{ id: a!.id, values: { name: 'B' } }, { id: b!.id, values: { name: 'A' } }], actor);
    expect(store.getRecord('company', a!.id).values['name']).toBe('B');
    expect(store.getRecord('company', b!.id).values['name']).toBe('A');
  });

  it('a value still held at the end of the batch is a 400 and changes nothing', () => {
    crm(store);
    const [a, b] = store.bulkCreate('company', [{ name: 'A' }, { name: 'B' }], actor);
    const err = errorOf(() => store.bulkUpdate('company', [{ id: a!.id, values: { name: 'B' } }, { id: b!.id, values: { name: 'B' } }], actor));
    expect(err.code).toBe('SCHEMA_VALIDATION_FAILED');
    expect(store.getRecord('company', a!.id).values['name']).toBe('A');
  });
});

describe('store: protected objects', () => {
  it('a protected object cannot be deleted or given attributes (403 SCHEMA_PROTECTED_OBJECT)', () => {
    crm(store);
    store.close();
    // Nothing public marks an object protected yet (core and bundle objects will); set the flag directly.
    const db = new Database(join(dir, 'schemasync.db'));
    db.prepare("UPDATE _ss_objects SET protected = 1 WHERE name = 'company'").run();
    db.close();
    store = openStore({ path: join(dir, 'schemasync.db') });
    expect(store.requireObject('company').protected).toBe(true);
    store.deleteAttribute('deal', 'company');
    expect(codeOf(() => store.deleteObject('company', { force: true }))).toBe('SCHEMA_PROTECTED_OBJECT');
    expect(codeOf(() => store.addAttribute('company', { name: 'x', type: 'text' }, RUNTIME))).toBe('SCHEMA_PROTECTED_OBJECT');
  });
});
