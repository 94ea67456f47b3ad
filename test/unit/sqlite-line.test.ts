import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteDriver } from '../../engine/store/sqlite/driver.js';
import { openLines } from '../../engine/store/sqlite/line.js';

/**
 * The per-file queue (engine/store/sqlite/line.ts) is shared by every connection of this
 * process to one file, and forgotten when the last of them closes: a long-lived process
 * that opens and closes stores (a test run, `dev` on a new data folder) keeps none behind.
 */
const dir = mkdtempSync(join(tmpdir(), 'ss-line-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the per-file write queue', () => {
  it('is shared by two connections to one file and kept until both close', async () => {
    const before = openLines();
    const path = join(dir, 'shared.sqlite');
    const a = new SqliteDriver(path);
    const b = new SqliteDriver(join(dir, '.', 'shared.sqlite'));
    expect(openLines()).toBe(before + 1);
    await a.exec('CREATE TABLE t (n INTEGER PRIMARY KEY)');
    // A transaction of `a` paused at an await: `b`'s write waits for it on the shared line
    // instead of SQLite's blocking busy wait (which would deadlock this thread).
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const held = a.transaction(async (tx) => {
      await tx.run('INSERT INTO t (n) VALUES (1)');
      await gate;
    });
    const waiting = b.transaction(async (tx) => void (await tx.run('INSERT INTO t (n) VALUES (2)')));
    release();
    await Promise.all([held, waiting]);
    expect(await b.all('SELECT n FROM t ORDER BY n')).toEqual([{ n: 1 }, { n: 2 }]);
    await a.close();
    expect(openLines()).toBe(before + 1);
    await b.close();
    expect(openLines()).toBe(before);
  });

  it('leaves no line behind after many stores opened and closed', async () => {
    const before = openLines();
    for (let i = 0; i < 20; i++) {
      const d = new SqliteDriver(i % 2 === 0 ? join(dir, `db-${i}.sqlite`) : ':memory:');
      await d.exec('CREATE TABLE t (n INTEGER)');
      await d.close();
    }
    expect(openLines()).toBe(before);
  });
});
