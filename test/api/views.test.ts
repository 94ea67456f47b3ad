import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// Views at runtime and views kept valid by every schema change (contract.md §3 "Roles,
// keys, views"; issue 16): PUT|DELETE /views/:name, GET /views/:name/records.

const FORBIDDEN = 'You do not have permission to perform this action.';

describe('views', () => {
  let s: TestServer;
  beforeEach(async () => {
    s = await startTestServer({ logger: false });
    await s.defineObject('deal', [
      { name: 'title', type: 'text', required: true },
      { name: 'stage', type: 'select', options: ['lead', 'won', 'lost'] },
      { name: 'amount', type: 'number' },
    ]);
  });
  afterEach(async () => s.close());

  const seed = async (n: number, stage = 'lead') => {
    const records = Array.from({ length: n }, (_, i) => ({ title: `deal ${i}`, stage, amount: i }));
    const r = await s.call('POST', '/records/deal/bulk-create', { body: { records } });
    expect(r.status).toBe(201);
  };

  it('PUT creates a runtime view checked like a declared one; GET shows it; DELETE removes it', async () => {
    const put = await s.call('PUT', '/views/open_deals', {
      body: { object: 'deal', filter: { stage: { in: ['lead'] } }, sort: [{ attribute: 'amount', direction: 'desc' }], columns: ['title', 'amount'] },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ name: 'open_deals', object: 'deal', owner: { kind: 'runtime' }, columns: ['title', 'amount'] });
    expect((await s.call('GET', '/views/open_deals')).body.data.owner).toEqual({ kind: 'runtime' });

    // replaced whole, still runtime
    const again = await s.call('PUT', '/views/open_deals', { body: { object: 'deal', columns: ['title'] } });
    expect(again.body.data.columns).toEqual(['title']);
    expect(again.body.data.filter).toBeUndefined();

    const del = await s.call('DELETE', '/views/open_deals');
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ name: 'open_deals' });
    expectError(await s.call('GET', '/views/open_deals'), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
    expectError(await s.call('DELETE', '/views/open_deals'), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
  });

  it('a bad view is refused at its paths, with the near miss; nothing is stored', async () => {
    const bad = await s.call('PUT', '/views/v', {
      body: { object: 'deal', columns: ['titel'], filter: { stage: { in: ['wonn'] } }, sort: [{ attribute: 'amout' }] },
    });
    expectError(bad, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    const paths = bad.body.errors.map((e: { path: unknown[] }) => e.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['columns.0', 'sort.0.attribute']));
    const messages = bad.body.errors.map((e: { message: string }) => e.message).join('\n');
    expect(messages).toContain('has no attribute "titel" (did you mean "title"?)');
    expect(messages).toContain('"wonn"');
    const noObject = await s.call('PUT', '/views/v', { body: { object: 'dael' } });
    expectError(noObject, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(noObject.body.errors).toEqual([{ path: ['object'], message: expect.stringContaining('(did you mean "deal"?)') }]);
    expectError(await s.call('PUT', '/views/Bad-Name', { body: { object: 'deal' } }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect((await s.call('GET', '/views')).body.data).toEqual([]);
  });

  it('a view a source pushed is owned by it: runtime PUT and DELETE are 409 SCHEMA_DUPLICATE', async () => {
    const declaration = {
      objects: { lead: { attributes: { name: { type: 'text' } } } },
      views: { leads: { object: 'lead', columns: ['name'] } },
    };
    expect((await s.call('PUT', '/schema/sources/crm', { body: { declaration } })).status).toBe(200);
    expectError(await s.call('PUT', '/views/leads', { body: { object: 'lead' } }), { status: 409, code: 'SCHEMA_DUPLICATE', message: /source "crm"/ });
    expectError(await s.call('DELETE', '/views/leads'), { status: 409, code: 'SCHEMA_DUPLICATE' });
    expect((await s.call('GET', '/views/leads')).body.data.columns).toEqual(['name']);
  });

  it('runs a view: its filter and sort, only its columns, keyset pages stable under concurrent inserts', async () => {
    await seed(25, 'lead');
    await seed(5, 'won');
    await s.call('PUT', '/views/open_deals', {
      body: { object: 'deal', filter: { stage: 'lead' }, sort: [{ attribute: 'amount', direction: 'desc' }], columns: ['title', 'amount'] },
    });
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=10&cursor=${encodeURIComponent(cursor)}` : '?limit=10';
      const r = await s.call('GET', `/views/open_deals/records${q}`);
      expect(r.status).toBe(200);
      for (const rec of r.body.data) {
        expect(Object.keys(rec.values).sort()).toEqual(['amount', 'title']);
        seen.push(rec.values.amount);
      }
      cursor = r.body.page.nextCursor;
      // Someone inserts between pages: rows already passed must not come back, none may be skipped.
      if (pages++ === 0) await s.call('POST', '/records/deal', { body: { title: 'late', stage: 'lead', amount: 1000 } });
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => 24 - i));
  });

  it('who may do what: running needs records read; put/delete need schema write', async () => {
    await seed(2);
    await s.call('PUT', '/views/all_deals', { body: { object: 'deal' } });
    const viewer = s.keyFor('viewer');
    expect((await s.call('GET', '/views/all_deals/records', { key: viewer })).status).toBe(200);
    expectError(await s.call('PUT', '/views/x', { key: viewer, body: { object: 'deal' } }), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN });
    expectError(await s.call('DELETE', '/views/all_deals', { key: viewer }), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN });
    const schemaOnly = s.keyFor('owner', ['schema:read']);
    expectError(await s.call('GET', '/views/all_deals/records', { key: schemaOnly }), { status: 403, code: 'SCHEMA_FORBIDDEN', message: FORBIDDEN });
    expect((await s.call('GET', '/views/all_deals', { key: schemaOnly })).status).toBe(200);
  });

  it('a runtime rename rewrites the views that name the attribute; a runtime drop of what a view reads is refused', async () => {
    await s.call('PUT', '/views/big', {
      body: { object: 'deal', filter: { or: [{ amount: { gt: 10 } }, { not: { amount: { lt: 0 } } }] }, sort: [{ attribute: 'amount' }], columns: ['title', 'amount'] },
    });
    const renamed = await s.call('PUT', '/schema/objects/deal/attributes/amount', { body: { name: 'value' } });
    expect(renamed.status).toBe(200);
    const view = (await s.call('GET', '/views/big')).body.data;
    expect(view).toMatchObject({
      owner: { kind: 'runtime' },
      columns: ['title', 'value'],
      sort: [{ attribute: 'value' }],
      filter: { or: [{ value: { gt: 10 } }, { not: { value: { lt: 0 } } }] },
    });
    expect((await s.call('GET', '/views/big/records')).status).toBe(200);

    const drop = await s.call('DELETE', '/schema/objects/deal/attributes/value');
    expectError(drop, { status: 409, code: 'SCHEMA_CONFLICT', message: /view "big"/ });
    expectError(await s.call('DELETE', '/schema/objects/deal?force=true'), { status: 409, code: 'SCHEMA_CONFLICT', message: /view "big"/ });
    // an attribute no view reads still drops
    expect((await s.call('DELETE', '/schema/objects/deal/attributes/stage')).status).toBe(200);
  });

  it('a push that drops what a runtime view reads is a conflict; a push rename rewrites the view and keeps its owner', async () => {
    const v1 = { objects: { lead: { attributes: { name: { type: 'text' }, owner: { type: 'email' }, score: { type: 'integer' } } } }, views: {} };
    expect((await s.call('PUT', '/schema/sources/crm', { body: { declaration: v1 } })).status).toBe(200);
    expect((await s.call('PUT', '/views/scored', { body: { object: 'lead', sort: [{ attribute: 'score' }], columns: ['name', 'owner'] } })).status).toBe(200);

    const v2 = { objects: { lead: { attributes: { name: { type: 'text' }, owner_email: { type: 'email', renamedFrom: 'owner' } } } }, views: {} };
    const dry = await s.call('PUT', '/schema/sources/crm', { body: { declaration: v2, dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.body.data.plan.conflicts).toEqual([
      expect.objectContaining({ code: 'SCHEMA_SYNC_CONFLICT', target: 'view:scored', message: expect.stringContaining('lead.score') }),
    ]);
    expectError(await s.call('PUT', '/schema/sources/crm', { body: { declaration: v2 } }), { status: 409, code: 'SCHEMA_SYNC_CONFLICT' });
    expect((await s.call('GET', '/schema/sources/crm')).body.data.version).toBe(1);

    // keep score: now only the rename remains, and the view follows it
    const v3 = { objects: { lead: { attributes: { ...v2.objects.lead.attributes, score: { type: 'integer' } } } }, views: {} };
    expect((await s.call('PUT', '/schema/sources/crm', { body: { declaration: v3 } })).status).toBe(200);
    const view = (await s.call('GET', '/views/scored')).body.data;
    expect(view.columns).toEqual(['name', 'owner_email']);
    expect(view.owner).toEqual({ kind: 'runtime' });

    // dropping the object a runtime view reads is a conflict too
    const gone = await s.call('PUT', '/schema/sources/crm', { body: { declaration: { objects: {}, views: {} }, dryRun: true } });
    expect(gone.body.data.plan.conflicts).toEqual([expect.objectContaining({ target: 'view:scored', message: expect.stringContaining('reads lead,') })]);
  });
});
