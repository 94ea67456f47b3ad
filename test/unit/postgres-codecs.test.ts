import { describe, expect, it } from 'vitest';
import type { AttributeSpec } from '../../engine/model/attribute.js';
import type { Param } from '../../engine/store/port.js';
import { CODECS } from '../../engine/store/postgres/codecs.js';
import { decodeColumn as decodeWith } from '../../engine/store/sql/convert.js';
import { tableIdent } from '../../engine/store/sql/idents.js';
import { postgresDdl } from '../../engine/store/postgres/ddl.js';
import { usePostgresDriver } from '../support/postgres-db.js';
import { ALL_SPECS, corpusValues } from '../support/value-corpus.js';

const decodeColumn = (v: unknown, spec: AttributeSpec): unknown => decodeWith(CODECS, v, spec);
const encodeColumn = (v: unknown, spec: AttributeSpec): Param => (v === null ? null : CODECS[spec.type].encode(v, spec));

/** Every type's values, stored in a real PostgreSQL column by the codecs and read back. */
describe('PostgreSQL codecs', () => {
  const pg = usePostgresDriver('codecs');

  // Two ways in: the store's bulk statement (every value a parameter), which the driver sends as
  // one JSON parameter read by json_populate_record, and a tuple with literals in it, which
  // it sends as a multi-row VALUES (driver.ts multiRowInsert).
  const WAYS = [
    ['json', (t: string) => `INSERT INTO ${t} ("id", "version", "created_at", "updated_at", "v") VALUES (?, ?, ?, ?, ?)`, (id: string, v: Param) => [id, 1, 'now', 'now', v]],
    ['values', (t: string) => `INSERT INTO ${t} (id, version, created_at, updated_at, v) VALUES (?, 1, 'now', 'now', ?)`, (id: string, v: Param) => [id, v]],
  ] as const;
  const CASES = ALL_SPECS.flatMap((s) => WAYS.map((w) => [`${s.type}${s.multiple ? ' (multiple)' : ''}`, w[0], s, w] as const));

  it.each(CASES)('round-trips every %s value (%s)', async (_label, way, spec: AttributeSpec, [, statement, row]) => {
    const object = `${spec.type}${spec.multiple ? '_many' : ''}_${way}`;
    const values = corpusValues(spec);
    const prepared = await pg.driver.transaction(async (tx) => {
      await postgresDdl.createRecordTable(tx, object, [spec]);
      await tx.runBatch(
        statement(tableIdent(object)),
        values.map((v, i) => row(`r${String(i).padStart(3, '0')}`, encodeColumn(v, spec))),
      );
      await tx.run(`INSERT INTO ${tableIdent(object)} (id, version, created_at, updated_at, v) VALUES ('null', 1, 'now', 'now', NULL)`);
      return tx.all<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
    });
    expect(prepared.some((p) => p.statement.includes(`json_populate_record(NULL::${tableIdent(object)}`))).toBe(way === 'json');
    const rows = await pg.driver.all<{ id: string; v: unknown }>(`SELECT id, v FROM ${tableIdent(object)} ORDER BY "_ss_seq"`);
    expect(rows.map((r) => r.id)).toEqual([...values.map((_v, i) => `r${String(i).padStart(3, '0')}`), 'null']);
    expect(rows.map((r) => decodeColumn(r.v, spec))).toEqual([...values, null]);
    // Exactly as written, key order of JSON objects included (the API returns what it got).
    expect(JSON.stringify(rows.map((r) => decodeColumn(r.v, spec)))).toBe(JSON.stringify([...values, null]));
    // Exactly the JS types the API returns (no numeric strings, no Date objects).
    rows.slice(0, -1).forEach((r, i) => expect(typeof decodeColumn(r.v, spec)).toBe(typeof values[i]));
  });

  it('gives every type a codec (a missing one fails to compile, this checks the column too)', () => {
    for (const c of Object.values(CODECS)) expect(c.column).toMatch(/^(text COLLATE "C"|bigint|double precision|boolean)$/);
  });
});
