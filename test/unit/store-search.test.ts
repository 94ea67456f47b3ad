import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../engine/errors.js';
import { codeOf } from '../support/service-error.js';
import { openStore } from '../../engine/store/index.js';
import type { Actor, SearchInput, Store } from '../../engine/store/types.js';

/** Search: filter grammar compiled to SQL, sort, keyset cursor (contract.md §3). */
let dir: string;
let store: Store;
const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ss-search-'));
  store = openStore({ path: join(dir, 'schemasync.db') });
  await store.createObject(
    {
      name: 'item',
      attributes: [
        { name: 'title', type: 'text' },
        { name: 'n', type: 'integer' },
        { name: 'tags', type: 'multiselect', options: ['red', 'green', 'blue'] },
        { name: 'done', type: 'boolean' },
        { name: 'due', type: 'datetime' },
      ],
    },
    { kind: 'runtime' },
  );
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const titles = async (input: SearchInput): Promise<string[]> => (await store.search('item', input)).records.map((r) => r.values['title'] as string);

describe('store search: filters', () => {
  beforeEach(async () => {
    await store.bulkCreate(
      'item',
      [
        { title: 'Alpha', n: 1, tags: ['red'], done: true, due: '2026-01-01T10:00:00+02:00' },
        { title: 'beta', n: 2, tags: ['green', 'blue'], done: false },
        { title: 'Gamma', n: 3, tags: [], done: false, due: '2026-03-01T00:00:00Z' },
        { title: 'delta', n: null },
      ],
      actor,
    );
  });

  it('compiles every operator and combinator', async () => {
    const sort = [{ attribute: 'title' as const, direction: 'asc' as const }];
    expect(await titles({ filter: { n: 2 }, sort })).toEqual(['beta']);
    expect(await titles({ filter: { n: { ne: 2 } }, sort })).toEqual(['Alpha', 'Gamma', 'delta']);
    expect(await titles({ filter: { n: { gte: 2, lt: 3 } }, sort })).toEqual(['beta']);
    expect(await titles({ filter: { n: { in: [1, 3] } }, sort })).toEqual(['Alpha', 'Gamma']);
    expect(await titles({ filter: { n: { nin: [1, 3] } }, sort })).toEqual(['beta', 'delta']);
    expect(await titles({ filter: { n: { isNull: true } }, sort })).toEqual(['delta']);
    expect(await titles({ filter: { title: { contains: 'ALP' } }, sort })).toEqual(['Alpha']);
    expect(await titles({ filter: { title: { startsWith: 'G' } }, sort })).toEqual(['Gamma']);
    expect(await titles({ filter: { tags: { contains: 'blue' } }, sort })).toEqual(['beta']);
    expect(await titles({ filter: { tags: 'red' }, sort })).toEqual(['Alpha']);
    expect(await titles({ filter: { done: true }, sort })).toEqual(['Alpha']);
    // Datetimes compare in UTC whatever offset the filter uses.
    expect(await titles({ filter: { due: { lt: '2026-01-01T09:00:00Z' } }, sort })).toEqual(['Alpha']);
    expect(await titles({ filter: { or: [{ n: 1 }, { title: 'delta' }] }, sort })).toEqual(['Alpha', 'delta']);
    expect(await titles({ filter: { not: { n: { lte: 2 } } }, sort })).toEqual(['Gamma', 'delta']);
    expect(await titles({ filter: { and: [{ done: false }, { n: { gt: 2 } }] }, sort })).toEqual(['Gamma']);
  });

  it('binds values, never splices them into SQL', async () => {
    expect(await titles({ filter: { title: "x' OR '1'='1" } })).toEqual([]);
    expect((await store.search('item', {})).total).toBe(4);
  });

  it('refuses unknown attributes, bad operators, limits and foreign cursors', async () => {
    expect(await codeOf(() => store.search('item', { filter: { nope: 1 } }))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(await codeOf(() => store.search('item', { filter: { n: { like: 1 } } as never }))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(await codeOf(() => store.search('item', { sort: [{ attribute: 'nope' }] }))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(await codeOf(() => store.search('item', { limit: 501 }))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(await codeOf(() => store.search('item', { limit: 0 }))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(await codeOf(() => store.search('item', { cursor: 'garbage' }))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(await codeOf(() => store.search('nope', {}))).toBe('SCHEMA_OBJECT_NOT_FOUND');
  });
});

describe('store search: keyset pagination', () => {
  it('visits every record exactly once in order, nulls included, while records are inserted between pages', async () => {
    const made = await store.bulkCreate(
      'item',
      Array.from({ length: 95 }, (_, i) => ({ title: `t${i}`, n: i % 7 === 0 ? null : i % 10 })),
      actor,
    );
    for (const direction of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      const ns: (number | null)[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.search('item', { sort: [{ attribute: 'n', direction }], limit: 10, ...(cursor ? { cursor } : {}) });
        seen.push(...page.records.map((r) => r.id));
        ns.push(...page.records.map((r) => r.values['n'] as number | null));
        cursor = page.nextCursor ?? undefined;
        // A concurrent insert that sorts before the current position must not shift pages.
        if (pages++ < 3) await store.createRecord('item', { title: 'late', n: direction === 'asc' ? 0 : 9 }, actor);
      } while (cursor);
      const original = new Set(made.map((m) => m.id));
      const visited = seen.filter((id) => original.has(id));
      expect(new Set(seen).size).toBe(seen.length);
      expect(visited.length).toBe(95);
      // The order is consistent: SQLite puts nulls first ascending and last descending.
      const key = (v: number | null): number => (v === null ? -1 : v);
      const sorted = [...ns].sort((a, b) => (direction === 'asc' ? key(a) - key(b) : key(b) - key(a)));
      expect(ns).toEqual(sorted);
    }
  });

  it('pages through filtered results with total', async () => {
    await store.bulkCreate('item', Array.from({ length: 30 }, (_, i) => ({ title: `t${i}`, n: i })), actor);
    const first = await store.search('item', { filter: { n: { gte: 10 } }, limit: 15 });
    expect(first.total).toBe(20);
    expect(first.records).toHaveLength(15);
    const second = await store.search('item', { filter: { n: { gte: 10 } }, limit: 15, cursor: first.nextCursor! });
    expect(second.records).toHaveLength(5);
    expect(second.nextCursor).toBeNull();
    // Counted on the first page only: a keyset walk does not recount every matching row per page.
    expect(second.total).toBeUndefined();
  });
});

describe('store search: null in in / nin lists', () => {
  beforeEach(async () => {
    await store.bulkCreate(
      'item',
      [
        { title: 'a', n: 1, tags: ['red'] },
        { title: 'b', n: 2, tags: ['green', 'blue'] },
        { title: 'c', n: 3, tags: ['blue'] },
        { title: null, n: null },
      ],
      actor,
    );
  });
  const names = async (filter: NonNullable<SearchInput['filter']>): Promise<(string | null)[]> =>
    (await store.search('item', { filter, sort: [{ attribute: 'n' }] })).records.map((r) => r.values['title'] as string | null);

  it('null in the list means "is null", as eq null does, and nin is the exact complement of in', async () => {
    expect(await names({ title: null })).toEqual([null]);
    expect(await names({ title: { in: ['a', null] } })).toEqual([null, 'a']);
    expect(await names({ title: { in: [null] } })).toEqual([null]);
    expect(await names({ title: { nin: ['a', null] } })).toEqual(['b', 'c']);
    expect(await names({ title: { nin: [null] } })).toEqual(['a', 'b', 'c']);
    expect(await names({ n: { in: [1, null] } })).toEqual([null, 'a']);
    expect(await names({ n: { nin: [1, null] } })).toEqual(['b', 'c']);
    expect(await names({ not: { title: { in: ['a', null] } } })).toEqual(['b', 'c']);
    expect(await names({ not: { title: { nin: ['a', null] } } })).toEqual([null, 'a']);
    // Without null in the list, nin keeps null values, like ne does.
    expect(await names({ title: { nin: ['a'] } })).toEqual([null, 'b', 'c']);
    expect(await names({ title: { ne: 'a' } })).toEqual([null, 'b', 'c']);
    expect(await names({ title: { in: ['a'] } })).toEqual(['a']);
  });

  it('the same on a multi-valued attribute: one element matches, null is no list at all', async () => {
    expect(await names({ tags: null })).toEqual([null]);
    expect(await names({ tags: { in: ['red', null] } })).toEqual([null, 'a']);
    expect(await names({ tags: { in: [null] } })).toEqual([null]);
    expect(await names({ tags: { nin: ['blue', null] } })).toEqual(['a']);
    expect(await names({ tags: { nin: [null] } })).toEqual(['a', 'b', 'c']);
    expect(await names({ tags: { nin: ['blue'] } })).toEqual([null, 'a']);
    expect(await names({ tags: { ne: 'blue' } })).toEqual([null, 'a']);
  });
});

describe('store search: sort order as given', () => {
  it('a list starting with id sorts by id first, asc and desc', async () => {
    await store.bulkCreate('item', ['d', 'a', 'c', 'b', 'e', 'a'].map((title) => ({ title })), actor);
    for (const direction of ['asc', 'desc'] as const) {
      const byId = (await store.search('item', { sort: [{ attribute: 'id', direction }] })).records.map((r) => r.id);
      const sorted = [...byId].sort();
      expect(byId).toEqual(direction === 'asc' ? sorted : sorted.reverse());
      const r = (await store.search('item', { sort: [{ attribute: 'id', direction }, { attribute: 'title' }] })).records.map((x) => x.id);
      expect(r).toEqual(byId);
    }
  });

  it('keyset pages with id first and id in the middle: every record once, in order, with inserts between pages', async () => {
    const made = await store.bulkCreate('item', Array.from({ length: 60 }, (_, i) => ({ title: `t${i % 4}`, n: i % 5 === 0 ? null : i % 3 })), actor);
    type Row = { id: string; n: number | null; title: string };
    const cmp = (sort: { attribute: 'id' | 'n' | 'title'; direction?: 'asc' | 'desc' }[]) => (x: Row, y: Row): number => {
      for (const s of sort) {
        const a = x[s.attribute];
        const b = y[s.attribute];
        // SQLite: nulls first ascending.
        const c = a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1;
        if (c !== 0) return s.direction === 'desc' ? -c : c;
      }
      return 0;
    };
    const sorts = [
      [{ attribute: 'id' as const }, { attribute: 'n' as const }],
      [{ attribute: 'id' as const, direction: 'desc' as const }, { attribute: 'title' as const }],
      [{ attribute: 'n' as const }, { attribute: 'id' as const, direction: 'desc' as const }, { attribute: 'title' as const }],
      [{ attribute: 'title' as const, direction: 'desc' as const }, { attribute: 'id' as const }, { attribute: 'n' as const }],
    ];
    for (const sort of sorts) {
      const seen: Row[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.search('item', { sort, limit: 7, ...(cursor ? { cursor } : {}) });
        seen.push(...page.records.map((r) => ({ id: r.id, n: r.values['n'] as number | null, title: r.values['title'] as string })));
        cursor = page.nextCursor ?? undefined;
        // Inserts between pages, some sorting before the position reached and some after.
        if (pages++ < 4) await store.bulkCreate('item', [{ title: 't0', n: null }, { title: 't3', n: 2 }], actor);
      } while (cursor);
      expect(new Set(seen.map((r) => r.id)).size).toBe(seen.length);
      const original = new Set(made.map((m) => m.id));
      expect(seen.filter((r) => original.has(r.id))).toHaveLength(60);
      expect(seen).toEqual([...seen].sort(cmp(sort)));
    }
  });
});

describe('store search: filter operands are checked against the attribute type', () => {
  beforeEach(async () => {
    await store.createObject(
      {
        name: 'event',
        attributes: [
          { name: 'title', type: 'text', minLength: 3 },
          { name: 'at', type: 'datetime' },
          { name: 'amount', type: 'number', min: 0 },
          { name: 'count', type: 'integer' },
          { name: 'closed', type: 'boolean' },
          { name: 'stage', type: 'select', options: ['lead', 'won'] },
          { name: 'tags', type: 'multiselect', options: ['a', 'b'] },
          { name: 'mail', type: 'email' },
          { name: 'meta', type: 'json' },
        ],
      },
      { kind: 'runtime' },
    );
    await store.bulkCreate(
      'event',
      [
        { title: 'A00', at: '2026-06-01T00:00:00Z', amount: 10, count: 1, closed: true, stage: 'lead', tags: ['a'], mail: 'a@x.io', meta: [1, 'k'] },
        { title: 'B00', at: '2026-06-01T02:00:00.500+02:00', amount: 20, count: 2, closed: false, stage: 'won', tags: ['b'], mail: 'n@x.io' },
        { title: 'C00', at: '2026-05-31T23:59:59Z', amount: 0, count: 3 },
      ],
      actor,
    );
  });

  const sort = [{ attribute: 'title' as const }];
  const found = async (filter: NonNullable<SearchInput['filter']>): Promise<string[]> => (await store.search('event', { filter, sort })).records.map((r) => r.values['title'] as string);
  async function refusal(filter: NonNullable<SearchInput['filter']>): Promise<ServiceError> {
    try {
      await store.search('event', { filter });
    } catch (err) {
      if (err instanceof ServiceError) return err;
      throw err;
    }
    throw new Error(`accepted ${JSON.stringify(filter)}`);
  }

  it('datetimes compare as the stored UTC form, whatever zone and precision the operand is written in', async () => {
    // A is stored as 2026-06-01T00:00:00.000Z, B as 2026-06-01T00:00:00.500Z.
    expect(await found({ at: '2026-06-01T00:00:00Z' })).toEqual(['A00']);
    expect(await found({ at: '2026-06-01T00:00:00.000Z' })).toEqual(['A00']);
    expect(await found({ at: '2026-06-01T02:00:00+02:00' })).toEqual(['A00']);
    expect(await found({ at: { in: ['2026-05-31T20:00:00.5-04:00'] } })).toEqual(['B00']);
    expect(await found({ at: { gt: '2026-06-01T00:00:00Z' } })).toEqual(['B00']);
    expect(await found({ at: { gte: '2026-06-01T00:00:00Z' } })).toEqual(['A00', 'B00']);
    expect(await found({ at: { lt: '2026-06-01T02:00:00+02:00' } })).toEqual(['C00']);
    expect(await found({ at: { lte: '2026-05-31T19:00:00.500-05:00' } })).toEqual(['A00', 'B00', 'C00']);
    expect((await refusal({ at: '2026-06-01' })).details.errors?.[0]?.message).toMatch(/"at" must be an ISO 8601 datetime/);
  });

  it('system datetimes too: created_at written with an offset finds its record', async () => {
    const all = (await store.search('event', { sort })).records;
    const a = all[0]!;
    const withOffset = new Date(Date.parse(a.createdAt) + 3_600_000).toISOString().replace('Z', '+01:00');
    const same = all.filter((r) => r.createdAt === a.createdAt).map((r) => r.values['title']);
    expect(same).toContain('A00');
    expect(await found({ created_at: withOffset })).toEqual(same);
    expect((await refusal({ version: 'one' })).details.errors?.[0]?.path).toEqual(['filter', 'version']);
  });

  it('refuses what a record write refuses: "true" for a boolean, "abc" and "5" for a number, a select typo naming the options', async () => {
    expect(await found({ closed: true })).toEqual(['A00']);
    const bool = await refusal({ closed: 'true' });
    expect(bool.code).toBe('SCHEMA_VALIDATION_FAILED');
    expect(bool.message).toBe('the filter on "closed" compares with "true", but "closed" must be true or false');
    expect(bool.details.errors).toEqual([{ path: ['filter', 'closed'], message: bool.message }]);
    expect((await refusal({ amount: { lt: 'abc' } })).details.errors).toEqual([
      { path: ['filter', 'amount', 'lt'], message: 'the filter on "amount" compares with "abc", but "amount" must be a number' },
    ]);
    await expect(store.createRecord('event', { title: 'D00', amount: '5' }, actor)).rejects.toThrow(ServiceError);
    expect((await refusal({ amount: '5' })).details.errors?.[0]?.path).toEqual(['filter', 'amount']);
    expect((await refusal({ count: { gte: 1.5 } })).message).toMatch(/"count" must be an integer/);
    const typo = await refusal({ stage: { in: ['lead', 'wonn'] } });
    expect(typo.details.errors).toEqual([{ path: ['filter', 'stage', 'in', 1], message: expect.stringContaining('must be one of "lead", "won"') }]);
    expect((await refusal({ tags: 'c' })).message).toMatch(/"tags" must be one of "a", "b"/);
    expect((await refusal({ mail: 'nobody' })).message).toMatch(/"mail" must be an email address/);
  });

  it("ignores the attribute's write constraints: a filter below min or shorter than minLength is fine", async () => {
    expect(await found({ amount: { lt: -5 } })).toEqual([]);
    expect(await found({ amount: { gte: -5 } })).toEqual(['A00', 'B00', 'C00']);
    expect(await found({ title: { in: ['A00', 'x'] } })).toEqual(['A00']);
  });

  it('operators apply where they mean something: no order on booleans, selects or lists; text operators on text', async () => {
    expect((await refusal({ closed: { gt: false } })).message).toBe('gt does not apply to "closed" (boolean): use eq, ne, in, nin or isNull');
    expect((await refusal({ stage: { lte: 'won' } })).details.errors?.[0]?.path).toEqual(['filter', 'stage', 'lte']);
    expect((await refusal({ meta: { gt: 1 } })).message).toMatch(/^gt does not apply to "meta"/);
    expect((await refusal({ amount: { contains: '1' } })).message).toMatch(/^contains does not apply to "amount" \(number\): contains applies to text attributes/);
    expect((await refusal({ tags: { startsWith: 'a' } })).message).toMatch(/^startsWith does not apply to "tags"/);
    expect((await refusal({ amount: { gt: null } })).message).toMatch(/use isNull/);
    // Meaningful uses keep working: parts of text, of an email, of an option; list membership.
    expect(await found({ mail: { gte: 'm' } })).toEqual(['B00']);
    expect(await found({ mail: { contains: '@X.' } })).toEqual(['A00', 'B00']);
    expect(await found({ stage: { startsWith: 'wo' } })).toEqual(['B00']);
    expect(await found({ tags: { contains: 'b' } })).toEqual(['B00']);
    expect(await found({ tags: { nin: ['a', null] } })).toEqual(['B00']);
    expect(await found({ meta: 1 })).toEqual(['A00']);
    expect(await found({ meta: { in: ['k', true] } })).toEqual(['A00']);
    expect(await found({ closed: { in: [false, null] } })).toEqual(['B00', 'C00']);
  });

  it('reports every bad operand with its path, nested ones included', async () => {
    const err = await refusal({
      and: [{ amount: { lt: 'abc' } }, { not: { closed: 'true' } }],
      or: [{ stage: { in: ['lead', 'wonn', 'lost'] } }, { at: { gt: 'yesterday' } }],
      closed: { gt: true },
    });
    expect(err.message).toBe('6 filter values are invalid');
    expect(err.details.errors?.map((e) => e.path)).toEqual([
      ['filter', 'and', 0, 'amount', 'lt'],
      ['filter', 'and', 1, 'not', 'closed'],
      ['filter', 'or', 0, 'stage', 'in', 1],
      ['filter', 'or', 0, 'stage', 'in', 2],
      ['filter', 'or', 1, 'at', 'gt'],
      ['filter', 'closed', 'gt'],
    ]);
  });

  it('shape and cursor refusals say what is wrong rather than "Validation failed"', async () => {
    expect((await refusal({ nope: 1 })).message).toBe('filter.nope: unknown attribute "nope"');
    let cursorError: unknown;
    try {
      await store.search('event', { cursor: 'garbage' });
    } catch (err) {
      cursorError = err;
    }
    expect(cursorError).toBeInstanceOf(ServiceError);
    expect((cursorError as ServiceError).message).toMatch(/^cursor: is not a cursor from this search/);
  });
});
