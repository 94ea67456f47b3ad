import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// PUT/GET /schema/sources/:id through the route (contract.md §3): validation first, then the store's push.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ rateLimit: true });
});
afterAll(async () => s.close());

const declaration = {
  objects: {
    company: { attributes: { name: { type: 'text', required: true } } },
  },
  views: {},
};

describe('schema sources', () => {
  it('refuses an invalid declaration with 400 and the spec name code, listing every problem', async () => {
    const r = await s.call('PUT', '/schema/sources/crm', {
      body: { declaration: { objects: { 'Bad-Name': { attributes: {} }, deal: { attributes: { amount: { type: 'strng' } } } } } },
    });
    expectError(r, { status: 400, code: 'SCHEMA_INVALID_OBJECT_NAME', errors: true });
    expect(r.body.errors.length).toBeGreaterThanOrEqual(2);
    expect(r.body.errors.every((e: { path: unknown[] }) => e.path[0] === 'declaration')).toBe(true);
  });

  it('dry-runs, applies, reads back, and refuses a stale if-match', async () => {
    const dry = await s.call('PUT', '/schema/sources/crm', { body: { declaration, dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.body.data).toMatchObject({ applied: false, plan: { steps: expect.any(Array) } });
    expectError(await s.call('GET', '/schema/sources/crm'), { status: 404, code: 'SCHEMA_SOURCE_NOT_FOUND' });

    const applied = await s.call('PUT', '/schema/sources/crm', { body: { declaration } });
    expect(applied.status).toBe(200);
    expect(applied.body.data).toMatchObject({ applied: true, version: 1 });

    const got = await s.call('GET', '/schema/sources/crm');
    expect(got.body.data).toMatchObject({ id: 'crm', version: 1, objects: ['company'] });
    expect((await s.call('GET', '/schema/objects/company')).body.data.owner).toEqual({ kind: 'source', id: 'crm' });

    expectError(await s.call('PUT', '/schema/sources/crm', { body: { declaration }, headers: { 'if-match': '"0"' } }), {
      status: 409,
      code: 'SCHEMA_CONFLICT',
    });
    // The same three forms as a record's if-match (one pattern): a weak tag or a lone quote is 400.
    for (const ifMatch of ['W/"1"', '"1', '1"']) {
      expectError(await s.call('PUT', '/schema/sources/crm', { body: { declaration }, headers: { 'if-match': ifMatch } }), {
        status: 400,
        code: undefined,
        message: 'Validation failed',
        errors: true,
      });
    }
    expect((await s.call('PUT', '/schema/sources/crm', { body: { declaration }, headers: { 'if-match': '1' } })).body.data).toMatchObject({ version: 1 });
  });

  it('a declaration that differs from the last valid one in any detail is validated again', async () => {
    const ok = { objects: { lead: { attributes: { email: { type: 'email' }, score: { type: 'integer', min: 0 } } } }, views: {} };
    expect((await s.call('PUT', '/schema/sources/leads', { body: { declaration: ok } })).status).toBe(200);
    expect((await s.call('PUT', '/schema/sources/leads', { body: { declaration: ok } })).status).toBe(200);
    // one field deep inside changes to something invalid: refused as a first push would be
    const badMin = { objects: { lead: { attributes: { email: { type: 'email' }, score: { type: 'integer', min: 'zero' } } } }, views: {} };
    const r = await s.call('PUT', '/schema/sources/leads', { body: { declaration: badMin } });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(r.body.errors[0].path).toEqual(['declaration', 'objects', 'lead', 'attributes', 'score', 'min']);
    // an extra attribute with a bad name, the rest as remembered
    const badName = { objects: { lead: { attributes: { email: { type: 'email' }, score: { type: 'integer', min: 0 }, Owner: { type: 'text' } } } }, views: {} };
    expectError(await s.call('PUT', '/schema/sources/leads', { body: { declaration: badName } }), { status: 400, code: 'SCHEMA_INVALID_ATTRIBUTE_NAME' });
    expect((await s.call('PUT', '/schema/sources/leads', { body: { declaration: ok } })).body.data).toMatchObject({ applied: true, version: 1 });
  });

  it('a push changing some objects is checked as a whole: errors in them, in views over them, and the rest kept', async () => {
    const base = () => ({
      objects: {
        prospect: { attributes: { email: { type: 'email' }, score: { type: 'integer', min: 0 } } },
        firm: { label: 'Firm', attributes: { name: { type: 'text' }, logo: { type: 'document', maxFileSize: '1MB' } } },
        memo: { attributes: { body: { type: 'text' } } },
      },
      views: { scored: { object: 'prospect', filter: { score: { gt: 0 } } } },
    });
    expect((await s.call('PUT', '/schema/sources/inc', { body: { declaration: base() } })).status).toBe(200);
    // an invalid field in one changed object
    const bad = base() as any;
    bad.objects.memo.attributes.body = { type: 'strng' };
    const r = await s.call('PUT', '/schema/sources/inc', { body: { declaration: bad } });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(r.body.errors.map((e: { path: unknown[] }) => e.path.slice(0, 4))).toContainEqual(['declaration', 'objects', 'memo', 'attributes']);
    // the view over a changed object names an attribute it no longer has
    const dropped = base() as any;
    delete dropped.objects.prospect.attributes.score;
    const v = await s.call('PUT', '/schema/sources/inc', { body: { declaration: dropped } });
    expectError(v, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(v.body.errors[0].path.slice(0, 3)).toEqual(['declaration', 'views', 'scored']);
    // a valid change to one object: the others are kept as sent, sizes normalised
    const good = base() as any;
    good.objects.memo.attributes.about = { type: 'relation', target: 'firm' };
    const ok = await s.call('PUT', '/schema/sources/inc', { body: { declaration: good } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.plan.steps).toMatchObject([{ action: 'add_attribute', target: 'memo.about' }]);
    const got = (await s.call('GET', '/schema/sources/inc')).body.data.declaration;
    expect(got).toEqual({ ...good, objects: { ...good.objects, firm: { ...good.objects.firm, attributes: { ...good.objects.firm.attributes, logo: { type: 'document', maxFileSize: 1024 * 1024 } } } } });
  });

  it('is exempt from rate limits', async () => {
    for (let i = 0; i < 105; i++) {
      const r = await s.call('PUT', '/schema/sources/crm', { body: { declaration, dryRun: true } });
      expect(r.status).toBe(200);
    }
  });
});
