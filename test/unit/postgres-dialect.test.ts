import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttributeSpec } from '../../engine/model/attribute.js';
import type { Dialect, Param } from '../../engine/store/port.js';
import { CODECS as PG_CODECS } from '../../engine/store/postgres/codecs.js';
import { encodeOperand } from '../../engine/store/sql/convert.js';
import { tableIdent } from '../../engine/store/sql/idents.js';
import { postgresDdl } from '../../engine/store/postgres/ddl.js';
import { postgresDialect } from '../../engine/store/postgres/dialect.js';
import { PostgresDriver } from '../../engine/store/postgres/driver.js';
import { CODECS as SQLITE_CODECS } from '../../engine/store/sqlite/codecs.js';
import { createRecordTable } from '../../engine/store/sqlite/ddl.js';
import { sqliteDialect } from '../../engine/store/sqlite/dialect.js';
import { createTestDatabase } from '../support/postgres-db.js';

/**
 * The dialect's SQL gives the same rows in the same order on both backends: the same data
 * in a real SQLite and a real PostgreSQL table, each condition built by each dialect.
 */
const SPECS: AttributeSpec[] = [
  { name: 'name', type: 'text' },
  { name: 'n', type: 'number' },
  { name: 'flag', type: 'boolean' },
  { name: 'tags', type: 'multiselect', options: ['a', 'b', 'c'] },
  { name: 'data', type: 'json' },
  { name: 'links', type: 'relation', target: 'x', multiple: true },
];
const ROWS: Record<string, unknown>[] = [
  { name: 'Acme', n: 1.5, flag: true, tags: ['a', 'b'], data: { k: 1 }, links: ['L1', 'L2'] },
  { name: 'acme 100%_off', n: null, flag: false, tags: [], data: [1, 'x', true], links: ['L2'] },
  { name: null, n: -3, flag: null, tags: ['c'], data: 'x', links: [] },
  { name: 'Zed', n: 1.5, flag: true, tags: null, data: 7, links: null },
  { name: 'ärger', n: 0, flag: false, tags: ['b'], data: null, links: ['L3'] },
  { name: 'Acme', n: null, flag: null, tags: ['a'], data: [[1]], links: ['L1'] },
];
const spec = (name: string): AttributeSpec => SPECS.find((s) => s.name === name)!;

type Cond = (d: Dialect) => { where: string; order?: string; params: { value: unknown; element: boolean; attr: string }[] };
const op = (attr: string, value: unknown, element = false) => ({ value, element, attr });

const CASES: Record<string, Cond> = {
  'order: text asc (NULLs first), then id': (d) => ({ where: 'TRUE', order: `${d.orderTerm({ sql: 'name', desc: false })}, id`, params: [] }),
  'order: text desc (NULLs last)': (d) => ({ where: 'TRUE', order: `${d.orderTerm({ sql: 'name', desc: true })}, id`, params: [] }),
  'order: number desc, boolean asc': (d) => ({ where: 'TRUE', order: `${d.orderTerm({ sql: 'n', desc: true })}, ${d.orderTerm({ sql: 'flag', desc: false })}, id`, params: [] }),
  'order: multiselect and json text': (d) => ({ where: 'TRUE', order: `${d.orderTerm({ sql: 'tags', desc: false })}, ${d.orderTerm({ sql: 'data', desc: true })}, id`, params: [] }),
  'contains text, case-insensitive, % and _ literal': (d) => ({ where: `${d.containsText('name', '?')} OR ${d.containsText('name', '?')}`, params: [op('name', 'CME'), op('name', '%_o')] }),
  'contains: no match for a wildcard': (d) => ({ where: d.containsText('name', '?'), params: [op('name', 'a%e')] }),
  'startsWith, case-sensitive': (d) => ({ where: d.startsWith('name', '?', '?'), params: [op('name', 'Ac'), op('name', 'Ac')] }),
  'null-safe equality and difference': (d) => ({ where: `${d.nullSafeEqual('n', '?')} OR ${d.nullSafeDistinct('flag', '?')}`, params: [op('n', null), op('flag', true)] }),
  'multiselect has one of': (d) => ({ where: d.listContainsAny('tags', ['?', '?']), params: [op('tags', 'b', true), op('tags', 'c', true)] }),
  'multiselect has one': (d) => ({ where: d.listContainsAny('tags', ['?']), params: [op('tags', 'a', true)] }),
  'json holds a primitive (as a value or an element)': (d) => ({ where: `${d.listContainsAny('data', ['?'])} OR ${d.listContainsAny('data', ['?'])}`, params: [op('data', 'x', true), op('data', 7, true)] }),
  'not (null counts as false)': (d) => ({ where: d.notOrNull(`${d.listContainsAny('tags', ['?'])}`), params: [op('tags', 'a', true)] }),
  'relation list has any / all in a set': (d) => ({
    where: `${d.listHasAnyIn('links', d.jsonListSet('?'))} AND NOT ${d.listAllIn('links', d.jsonListSet('?'))}`,
    params: [op('links', '["L2","L3"]'), op('links', '["L2"]')],
  }),
};

describe('PostgreSQL dialect against SQLite', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let pg: PostgresDriver;
  const lite = new Database(':memory:');
  const ids = ROWS.map((_r, i) => `r${i}`);
  beforeAll(async () => {
    db = await createTestDatabase('dialect');
    pg = new PostgresDriver({ url: db.url, max: 2 });
    await pg.transaction((tx) => postgresDdl.createRecordTable(tx, 't', SPECS));
    createRecordTable(lite, 't', SPECS);
    const cols = SPECS.map((s) => `"${s.name}"`).join(', ');
    const marks = SPECS.map(() => '?').join(', ');
    const sql = (table: string): string => `INSERT INTO ${table} (id, version, created_at, updated_at, ${cols}) VALUES (?, 1, 'c', 'u', ${marks})`;
    await pg.runBatch(sql(tableIdent('t')), ROWS.map((r, i) => [ids[i]!, ...SPECS.map((s) => r[s.name] === null ? null : PG_CODECS[s.type].encode(r[s.name], s))]));
    const ins = lite.prepare(sql(tableIdent('t')));
    ROWS.forEach((r, i) => ins.run(ids[i], ...SPECS.map((s) => (r[s.name] === null ? null : SQLITE_CODECS[s.type].encode(r[s.name], s)))));
  });
  afterAll(async () => {
    lite.close();
    await pg.close();
    await db.drop();
  });

  it.each(Object.entries(CASES))('%s', async (_name, cond) => {
    const run = (d: Dialect, encode: (c: ReturnType<Cond>['params'][number]) => Param) => {
      const c = cond(d);
      const where = c.where === 'TRUE' && d === sqliteDialect ? '1' : c.where;
      return { sql: `SELECT id FROM %T WHERE ${where} ORDER BY ${c.order ?? 'id'}`, params: c.params.map(encode) };
    };
    const l = run(sqliteDialect, (x) => (x.attr === 'links' ? (x.value as string) : (encodeOperand(SQLITE_CODECS, x.value, x.element, spec(x.attr)) as Param)));
    const p = run(postgresDialect, (x) => (x.attr === 'links' ? (x.value as string) : encodeOperand(PG_CODECS, x.value, x.element, spec(x.attr))));
    const fromLite = (lite.prepare(l.sql.replace('%T', tableIdent('t'))).all(...l.params) as { id: string }[]).map((r) => r.id);
    const fromPg = (await pg.all<{ id: string }>(p.sql.replace('%T', tableIdent('t')), p.params)).map((r) => r.id);
    expect(fromPg).toEqual(fromLite);
    // Each case selects something (the one about wildcards: nothing on either).
    expect(fromLite.length > 0).toBe(!_name.includes('no match'));
  });

  it('removes ids from a relation list, order kept, NULL when none is left', async () => {
    const sql = (d: Dialect) => `SELECT id, ${d.listWithout('links', d.jsonListSet('?'))} AS rest FROM %T ORDER BY id`;
    const set = '["L2","L3"]';
    const lites = (lite.prepare(sql(sqliteDialect).replace('%T', tableIdent('t'))).all(set) as { id: string; rest: string | null }[]).map((r) => [r.id, r.rest && JSON.parse(r.rest)]);
    const pgs = (await pg.all<{ id: string; rest: string | null }>(sql(postgresDialect).replace('%T', tableIdent('t')), [set])).map((r) => [r.id, r.rest && JSON.parse(r.rest)]);
    expect(pgs).toEqual(lites);
  });
});
