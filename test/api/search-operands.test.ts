import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// Search filter operands over real HTTP and a real SQLite file: checked against the
// attribute's type (engine/model/filter-operand.ts), compared as the column stores them.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await s.defineObject('shift', [
    { name: 'title', type: 'text', required: true },
    { name: 'at', type: 'datetime' },
    { name: 'amount', type: 'number', min: 0 },
    { name: 'closed', type: 'boolean' },
    { name: 'stage', type: 'select', options: ['lead', 'won'] },
  ]);
  const made = await s.call('POST', '/records/shift/bulk-create', {
    body: {
      records: [
        { title: 'a', at: '2026-06-01T00:00:00Z', amount: 5, closed: true, stage: 'lead' },
        { title: 'b', at: '2026-06-01T02:00:00.250+02:00', amount: 0, closed: false, stage: 'won' },
        { title: 'c', at: '2026-05-31T23:00:00Z', amount: 9 },
      ],
    },
  });
  expect(made.status).toBe(201);
});
afterAll(async () => s.close());

const search = (filter: unknown) => s.call('POST', '/records/shift/search', { body: { filter, sort: [{ attribute: 'title' }] } });
const titles = async (filter: unknown): Promise<string[]> => {
  const r = await search(filter);
  expect(r.status).toBe(200);
  return r.body.data.map((d: { values: { title: string } }) => d.values.title);
};

describe('search filter operands', () => {
  it('datetimes match in UTC with or without milliseconds, with Z or an offset, for equality and ranges', async () => {
    expect(await titles({ at: '2026-06-01T00:00:00Z' })).toEqual(['a']);
    expect(await titles({ at: '2026-06-01T00:00:00.000Z' })).toEqual(['a']);
    expect(await titles({ at: '2026-06-01T02:00:00+02:00' })).toEqual(['a']);
    expect(await titles({ at: '2026-06-01T00:00:00.25Z' })).toEqual(['b']);
    expect(await titles({ at: { gt: '2026-06-01T00:00:00Z' } })).toEqual(['b']);
    expect(await titles({ at: { gte: '2026-06-01T02:00:00+02:00', lt: '2026-06-01T00:00:00.250Z' } })).toEqual(['a']);
    expect(await titles({ at: { lte: '2026-06-01T01:00:00+02:00' } })).toEqual(['c']);
  });

  it('a boolean given "true", a number given "abc" or "5", a select typo: 400 naming the attribute and what it takes', async () => {
    const bool = await search({ closed: 'true' });
    expectError(bool, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: 'the filter on "closed" compares with "true", but "closed" must be true or false', errors: true });
    expect(bool.body.errors).toEqual([{ path: ['filter', 'closed'], message: bool.body.message }]);
    const abc = await search({ amount: { lt: 'abc' } });
    expectError(abc, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: /"amount" must be a number/, errors: true });
    expect(abc.body.errors[0].path).toEqual(['filter', 'amount', 'lt']);
    // The write path refuses "5" for a number, so the filter does too.
    expectError(await s.call('POST', '/records/shift', { body: { title: 'd', amount: '5' } }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expectError(await search({ amount: '5' }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: /"amount" must be a number/, errors: true });
    const typo = await search({ stage: 'wonn' });
    expectError(typo, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: /"stage" must be one of "lead", "won"/, errors: true });
    expect(await titles({ closed: true })).toEqual(['a']);
    expect(await titles({ stage: { in: ['won'] } })).toEqual(['b']);
  });

  it("an attribute's min does not limit its filters", async () => {
    expect(await titles({ amount: { lt: -5 } })).toEqual([]);
    expect(await titles({ amount: { gt: -5, lt: 6 } })).toEqual(['a', 'b']);
  });

  it('every bad operand is reported with its path, and the message counts them', async () => {
    const r = await search({ or: [{ closed: 'yes' }, { amount: { in: [1, 'two', 'three'] } }], stage: { gt: 'lead' }, at: 'tomorrow' });
    expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: '5 filter values are invalid', errors: true });
    expect(r.body.errors.map((e: { path: unknown[] }) => e.path)).toEqual([
      ['filter', 'or', 0, 'closed'],
      ['filter', 'or', 1, 'amount', 'in', 1],
      ['filter', 'or', 1, 'amount', 'in', 2],
      ['filter', 'stage', 'gt'],
      ['filter', 'at'],
    ]);
    for (const e of r.body.errors as { message: string }[]) expect(e.message).toMatch(/"(closed|amount|stage|at)"/);
  });

  it('filter and cursor refusals carry a descriptive message with the code ("Validation failed" is for the body schema)', async () => {
    expectError(await search({ nope: 1 }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: 'filter.nope: unknown attribute "nope"', errors: true });
    const cursor = await s.call('POST', '/records/shift/search', { body: { cursor: 'garbage' } });
    expectError(cursor, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', message: /^cursor: is not a cursor from this search/, errors: true });
  });
});
