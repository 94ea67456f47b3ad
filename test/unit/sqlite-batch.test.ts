import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Param } from '../../engine/store/port.js';
import { SqliteDriver } from '../../engine/store/sqlite/driver.js';

/**
 * Executor.runBatch on SQLite (engine/store/sqlite/batch.ts): a bulk create's INSERT goes in
 * multi-row chunks, so what a caller relies on is checked over a real database file: every
 * row lands once, in order (the rowids follow the rows, which the search index's bulk pass
 * reads), a chunk boundary or a remainder loses nothing, a refused row fails the batch with
 * the error a single INSERT gives, and other statements still run once per row.
 */
let dir: string;
let driver: SqliteDriver;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ss-batch-'));
  driver = new SqliteDriver(join(dir, 'db.sqlite'));
  await driver.exec('CREATE TABLE "t" ("id" TEXT PRIMARY KEY, "n" INTEGER UNIQUE, "label" TEXT, "x" REAL) STRICT');
});
afterEach(async () => {
  await driver.close();
  rmSync(dir, { recursive: true, force: true });
});

const INSERT = 'INSERT INTO "t" ("id", "n", "label", "x") VALUES (?, ?, ?, ?)';

/** A producer that reuses one array, as records.ts writeCreates does. */
function* rows(from: number, count: number): Generator<readonly Param[]> {
  const row: Param[] = [];
  for (let i = from; i < from + count; i++) {
    row[0] = `id-${String(i).padStart(6, '0')}`;
    row[1] = i;
    row[2] = i % 7 === 0 ? null : `row ${i}`;
    row[3] = i / 4;
    yield row;
  }
}

describe('SQLite runBatch', () => {
  for (const count of [1, 49, 50, 51, 249, 1000, 1037]) {
    it(`writes ${count} rows once each, in order, whatever the chunks`, async () => {
      const out = await driver.transaction((tx) => tx.runBatch(INSERT, rows(0, count)));
      expect(out.changes).toBe(count);
      const stored = await driver.all<{ rowid: number; id: string; n: number; label: string | null; x: number }>('SELECT _rowid_ AS rowid, id, n, label, x FROM "t" ORDER BY _rowid_');
      expect(stored).toHaveLength(count);
      stored.forEach((r, i) => {
        expect(r).toEqual({ rowid: i + 1, id: `id-${String(i).padStart(6, '0')}`, n: i, label: i % 7 === 0 ? null : `row ${i}`, x: i / 4 });
      });
    });
  }

  it('a refused row in a chunk or in the remainder fails the batch as a unique error, and the transaction writes nothing', async () => {
    await driver.transaction((tx) => tx.runBatch(INSERT, rows(0, 10)));
    for (const at of [3, 75, 120]) {
      const batch = Array.from(rows(100, 121), (r) => [...r]);
      batch[at]![1] = 4;
      const write = driver.transaction((tx) => tx.runBatch(INSERT, batch));
      await expect(write).rejects.toSatisfy((err) => driver.classify(err) === 'unique');
      expect(await driver.get('SELECT count(*) AS n FROM "t"')).toEqual({ n: 10 });
    }
  });

  it('a row of another width is refused as better-sqlite3 refuses it, and nothing lands', async () => {
    const batch: Param[][] = Array.from(rows(0, 60), (r) => [...r]);
    batch[55] = ['short', 1];
    await expect(driver.transaction((tx) => tx.runBatch(INSERT, batch))).rejects.toThrow(/parameter/i);
    expect(await driver.get('SELECT count(*) AS n FROM "t"')).toEqual({ n: 0 });
  });

  it('any other statement runs once per row', async () => {
    await driver.transaction((tx) => tx.runBatch(INSERT, rows(0, 5)));
    const upd = await driver.transaction((tx) => tx.runBatch('UPDATE "t" SET label = ? WHERE n = ?', [['a', 1], ['b', 2], ['c', 99]]));
    expect(upd.changes).toBe(2);
    expect(await driver.all('SELECT label FROM "t" WHERE n IN (1, 2) ORDER BY n')).toEqual([{ label: 'a' }, { label: 'b' }]);
  });
});
