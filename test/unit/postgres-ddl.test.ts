import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { AttributeSpec } from '../../engine/model/attribute.js';
import { CODECS as PG_CODECS } from '../../engine/store/postgres/codecs.js';
import { postgresDdl } from '../../engine/store/postgres/ddl.js';
import { PostgresDriver } from '../../engine/store/postgres/driver.js';
import { decodeColumn } from '../../engine/store/sql/convert.js';
import { tableIdent } from '../../engine/store/sql/idents.js';
import { CODECS as SQLITE_CODECS } from '../../engine/store/sqlite/codecs.js';
import { createRecordTable as sqliteCreate } from '../../engine/store/sqlite/ddl.js';
import { changeColumnType as sqliteRebuild } from '../../engine/store/sqlite/columns.js';
import { usePostgresDriver } from '../support/postgres-db.js';
import { ALL_SPECS, corpusValues } from '../support/value-corpus.js';

const label = (s: AttributeSpec): string => `${s.type}${s.multiple ? '*' : ''}`;
const other: AttributeSpec = { name: 'keep', type: 'text', unique: true };

/** SQLite: the store's own DDL on a real (in-memory) database; the values after the change. */
function onSqlite(from: AttributeSpec, to: AttributeSpec, values: unknown[]): unknown[] {
  const db = new Database(':memory:');
  try {
    sqliteCreate(db, 'thing', [from, other]);
    const insert = db.prepare(`INSERT INTO ${tableIdent('thing')} (id, version, created_at, updated_at, v, keep) VALUES (?, 1, 'c', 'u', ?, ?)`);
    values.forEach((v, i) => insert.run(`r${i}`, v === null ? null : SQLITE_CODECS[from.type].encode(v, from), `k${i}`));
    sqliteRebuild(db, 'thing', 'att1', from, to);
    const rows = db.prepare(`SELECT v FROM ${tableIdent('thing')} ORDER BY _rowid_`).all() as { v: string | number | null }[];
    return rows.map((r) => decodeColumn(SQLITE_CODECS, r.v, to));
  } finally {
    db.close();
  }
}

describe('PostgreSQL record-table DDL', () => {
  const pg = usePostgresDriver('ddl');

  /** PostgreSQL: the backend's changeColumnType; the values after the change (and the other column's). */
  async function onPostgres(object: string, from: AttributeSpec, to: AttributeSpec, values: unknown[]): Promise<unknown[]> {
    const t = tableIdent(object);
    await pg.driver.transaction(async (tx) => {
      await postgresDdl.createRecordTable(tx, object, [from, other]);
      await postgresDdl.syncIndex(tx, object, `keep-${object}`, other, true);
      await tx.runBatch(
        `INSERT INTO ${t} (id, version, created_at, updated_at, v, keep) VALUES (?, 1, 'c', 'u', ?, ?)`,
        values.map((v, i) => [`r${i}`, v === null ? null : PG_CODECS[from.type].encode(v, from), `k${i}`]),
      );
    });
    await pg.driver.transaction((tx) => postgresDdl.changeColumnType(tx, object, `att-${object}`, from, to));
    const rows = await pg.driver.all<{ v: unknown; keep: string }>(`SELECT v, keep FROM ${t} ORDER BY "_ss_seq"`);
    expect(rows.map((r) => r.keep)).toEqual(values.map((_v, i) => `k${i}`));
    return rows.map((r) => decodeColumn(PG_CODECS, r.v, to));
  }

  const pairs = ALL_SPECS.flatMap((from) => ALL_SPECS.filter((to) => label(to) !== label(from)).map((to) => [`${label(from)} → ${label(to)}`, from, to] as const));

  it(`converts every type to every other as the SQLite backend does (${pairs.length} changes)`, async () => {
    let n = 0;
    const differences: string[] = [];
    for (const [name, from, to] of pairs) {
      const values = [...corpusValues(from), null];
      const expected = onSqlite(from, to, values);
      const got = await onPostgres(`c${n++}`, from, to, values);
      try {
        expect(got).toEqual(expected);
      } catch {
        differences.push(`${name}: sqlite ${JSON.stringify(expected)} postgres ${JSON.stringify(got)}`);
      }
    }
    expect(differences).toEqual([]);
  }, 180_000);

  it('keeps unique and relation indexes through renames, refuses duplicates, and drops what it is told', async () => {
    const rel: AttributeSpec = { name: 'owner', type: 'relation', target: 'x' };
    const uniq: AttributeSpec = { name: 'code', type: 'text', unique: true };
    await pg.driver.transaction(async (tx) => {
      await postgresDdl.createRecordTable(tx, 'deal', [rel, uniq]);
      await postgresDdl.syncIndex(tx, 'deal', 'a-rel', rel, true);
      await postgresDdl.syncIndex(tx, 'deal', 'a-uniq', uniq, true);
      await postgresDdl.renameColumn(tx, 'deal', 'code', 'ref');
      await postgresDdl.renameRecordTable(tx, 'deal', 'agreement');
      await postgresDdl.addColumn(tx, 'agreement', { name: 'tags', type: 'multiselect', options: ['a'] });
    });
    const t = tableIdent('agreement');
    await pg.driver.run(`INSERT INTO ${t} (id, version, created_at, updated_at, ref, tags) VALUES ('1', 1, 'c', 'u', 'R1', '["a"]')`);
    const dup = await pg.driver.run(`INSERT INTO ${t} (id, version, created_at, updated_at, ref) VALUES ('2', 1, 'c', 'u', 'R1')`).catch((e: unknown) => e);
    expect(pg.driver.classify(dup)).toBe('unique');
    const indexes = await pg.driver.all<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE tablename = ? ORDER BY indexname', ['r_agreement']);
    expect(indexes.map((i) => i.indexname)).toEqual(expect.arrayContaining(['ix_arel', 'ix_auniq']));
    // Unique off: the index goes, duplicates are allowed.
    await pg.driver.transaction((tx) => postgresDdl.syncIndex(tx, 'agreement', 'a-uniq', { ...uniq, name: 'ref', unique: false }, false));
    await pg.driver.run(`INSERT INTO ${t} (id, version, created_at, updated_at, ref) VALUES ('2', 1, 'c', 'u', 'R1')`);
    await pg.driver.transaction((tx) => postgresDdl.dropColumn(tx, 'agreement', 'a-rel', 'owner'));
    const cols = await pg.driver.all<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_name = 'r_agreement' ORDER BY ordinal_position");
    expect(cols.map((c) => c.column_name)).toEqual(['_ss_seq', 'id', 'version', 'created_at', 'updated_at', 'created_by', 'ref', 'tags']);
    // A new object under the renamed one's old name does not collide with its leftovers.
    await pg.driver.transaction((tx) => postgresDdl.createRecordTable(tx, 'deal', []));
    await pg.driver.transaction((tx) => postgresDdl.dropRecordTable(tx, 'deal'));
    expect(await pg.driver.get("SELECT to_regclass('r_deal') AS t")).toEqual({ t: null });
  });

  it('a failing DDL transaction leaves the schema as it was', async () => {
    await pg.driver.transaction((tx) => postgresDdl.createRecordTable(tx, 'stay', [{ name: 'a', type: 'text' }]));
    const failed = pg.driver.transaction(async (tx) => {
      await postgresDdl.addColumn(tx, 'stay', { name: 'b', type: 'integer' });
      await postgresDdl.renameRecordTable(tx, 'stay', 'moved');
      throw new Error('later step failed');
    });
    await expect(failed).rejects.toThrow('later step failed');
    const cols = await pg.driver.all<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_name = 'r_stay' ORDER BY ordinal_position");
    expect(cols.map((c) => c.column_name).at(-1)).toBe('a');
  });

  it('takes the longest object name (PostgreSQL cuts identifiers at 63 bytes, the same way everywhere)', async () => {
    const long = `${'x'.repeat(60)}abc`;
    await pg.driver.transaction((tx) => postgresDdl.createRecordTable(tx, long, [{ name: 'v', type: 'text' }]));
    await pg.driver.run(`INSERT INTO ${tableIdent(long)} (id, version, created_at, updated_at, v) VALUES ('1', 1, 'c', 'u', 'kept')`);
    expect(await pg.driver.get(`SELECT v FROM ${tableIdent(long)}`)).toEqual({ v: 'kept' });
  });
});
