import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Executor } from '../../engine/store/port.js';
import { GROUP_LIMIT, SqliteDriver } from '../../engine/store/sqlite/driver.js';

/**
 * Group commit in the SQLite driver (engine/store/sqlite/driver.ts transaction): writes that
 * wait at the same time share one BEGIN IMMEDIATE … COMMIT, each in its own savepoint. A real
 * database file; the failures are real SQLite failures (a deferred foreign key refused at
 * COMMIT, a transaction ended under a member), not a mocked connection.
 */
let dir: string;
let driver: SqliteDriver;
const GROUP = { group: true } as const;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ss-group-'));
  driver = new SqliteDriver(join(dir, 'db.sqlite'));
  await driver.exec('CREATE TABLE t (n INTEGER PRIMARY KEY, who TEXT NOT NULL)');
  await driver.exec('CREATE TABLE parent (id INTEGER PRIMARY KEY)');
  await driver.exec('CREATE TABLE child (pid INTEGER NOT NULL REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)');
});
afterEach(async () => {
  await driver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A transaction that holds the queue until `release()` (a body awaiting I/O). */
function holder(): { done: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const done = driver.transaction(async (tx) => {
    await tx.run("INSERT INTO t (n, who) VALUES (0, 'holder')");
    await gate;
  });
  return { done, release };
}

/** Appends the next number after the largest one it reads: a read-then-write, like if-match. */
const next = (who: string) => async (tx: Executor) => {
  const row = await tx.get<{ n: number }>('SELECT MAX(n) AS n FROM t');
  const n = (row?.n ?? 0) + 1;
  await tx.run('INSERT INTO t (n, who) VALUES (?, ?)', [n, who]);
  return n;
};

const rows = () => driver.all<{ n: number; who: string }>('SELECT n, who FROM t ORDER BY n');

describe('SQLite driver: group commit', () => {
  it('runs a lone write at once, in its own transaction', async () => {
    let ran = false;
    const done = driver.transaction(async (tx) => {
      ran = true;
      await tx.run("INSERT INTO t (n, who) VALUES (1, 'a')");
    }, GROUP);
    // The body started before transaction() returned: no turn of the event loop was added.
    expect(ran).toBe(true);
    await done;
    expect(driver.commits).toBe(1);
  });

  it('runs the grouped writes waiting behind one transaction in ONE commit, each seeing the ones before it', async () => {
    const h = holder();
    const writes = Array.from({ length: 20 }, (_, i) => driver.transaction(next(`w${i}`), GROUP));
    h.release();
    await h.done;
    // Every read-then-write saw its predecessors' rows (no two picked the same number).
    expect((await Promise.all(writes)).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(driver.commits).toBe(2); // the holder's, and the group's
    expect((await rows()).length).toBe(21);
  });

  it('keeps writes that did not opt in apart', async () => {
    const h = holder();
    const writes = Array.from({ length: 5 }, (_, i) => driver.transaction(next(`w${i}`)));
    h.release();
    await Promise.all([h.done, ...writes]);
    expect(driver.commits).toBe(6);
  });

  it(`takes at most ${GROUP_LIMIT} writes into one commit`, async () => {
    const h = holder();
    const writes = Array.from({ length: GROUP_LIMIT + 1 }, (_, i) => driver.transaction(next(`w${i}`), GROUP));
    h.release();
    await Promise.all([h.done, ...writes]);
    expect(driver.commits).toBe(3);
  });

  it('rolls a failing member back to its savepoint alone: its caller gets its error, the others land', async () => {
    const h = holder();
    const a = driver.transaction(next('a'), GROUP);
    const bad = driver.transaction(async (tx) => {
      await next('bad')(tx);
      await tx.run("INSERT INTO t (n, who) VALUES (1, 'clash')"); // n = 1 is a's: the second write fails
    }, GROUP);
    const c = driver.transaction(next('c'), GROUP);
    h.release();
    await h.done;
    await expect(bad).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(await a).toBe(1);
    expect(await c).toBe(2); // the failed member's first row (n = 2) was undone with it
    expect((await rows()).map((r) => r.who)).toEqual(['holder', 'a', 'c']);
    expect(driver.commits).toBe(2);
  });

  it('runs a group whose members all succeed without savepoints: each body once, one FTS5 segment for the group', async () => {
    // FTS5 writes its pending terms out as a new segment at every SAVEPOINT it is part of, so
    // a savepoint per member left one segment per member (the cost a group is there to share).
    await driver.exec("CREATE VIRTUAL TABLE f USING fts5(text, tokenize='unicode61 remove_diacritics 2', prefix='2 3 4')");
    await driver.exec("INSERT INTO f(f, rank) VALUES ('automerge', 0)");
    const segments = async () => (await driver.get<{ n: number }>('SELECT count(DISTINCT segid) AS n FROM f_idx'))!.n;
    const h = holder();
    const runs = new Map<number, number>();
    const writes = Array.from({ length: 8 }, (_, i) =>
      driver.transaction(async (tx) => {
        runs.set(i, (runs.get(i) ?? 0) + 1);
        await tx.run('INSERT INTO f (rowid, text) VALUES (?, ?)', [i + 1, `quokka number ${i}`]);
        return next(`w${i}`)(tx);
      }, GROUP),
    );
    h.release();
    await Promise.all([h.done, ...writes]);
    expect(driver.commits).toBe(2);
    expect([...runs.values()]).toEqual(Array.from({ length: 8 }, () => 1));
    expect(await segments()).toBe(1);
    expect(await driver.get("SELECT count(*) AS n FROM f WHERE f MATCH 'quokka'")).toEqual({ n: 8 });
    await driver.exec("INSERT INTO f(f, rank) VALUES ('integrity-check', 1)");
  });

  it('runs a group again the careful way when a member fails: the others land once, the failed one leaves nothing in the index', async () => {
    await driver.exec("CREATE VIRTUAL TABLE f USING fts5(text, tokenize='unicode61 remove_diacritics 2', prefix='2 3 4')");
    const h = holder();
    const member = (i: number) =>
      driver.transaction(async (tx) => {
        await tx.run('INSERT INTO f (rowid, text) VALUES (?, ?)', [i + 1, `wombat number ${i}`]);
        const n = await next(`w${i}`)(tx);
        if (i === 3) await tx.run("INSERT INTO t (n, who) VALUES (1, 'clash')"); // w0's n: refused after its index entry
        return n;
      }, GROUP);
    const writes = Array.from({ length: 6 }, (_, i) => member(i));
    h.release();
    await h.done;
    const settled = await Promise.allSettled(writes);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))).toEqual([1, 2, 3, 4, 5]);
    expect((await rows()).map((r) => r.who)).toEqual(['holder', 'w0', 'w1', 'w2', 'w4', 'w5']);
    expect(driver.commits).toBe(2);
    const found = await driver.all<{ rowid: number }>("SELECT rowid FROM f WHERE f MATCH 'wombat' ORDER BY rowid");
    expect(found.map((r) => r.rowid)).toEqual([1, 2, 3, 5, 6]);
    await driver.exec("INSERT INTO f(f, rank) VALUES ('integrity-check', 1)");
  });

  it('settles no member before the COMMIT', async () => {
    const h = holder();
    const events: string[] = [];
    const a = driver.transaction(next('a'), GROUP).then(() => events.push('a answered'));
    const b = driver.transaction(async (tx) => {
      events.push('b runs');
      // Let every callback that could run do so: a's answer must still wait for the COMMIT.
      await new Promise((r) => setImmediate(r));
      events.push('b done');
      return next('b')(tx);
    }, GROUP);
    h.release();
    await Promise.all([h.done, a, b]);
    expect(events).toEqual(['b runs', 'b done', 'a answered']);
  });

  it('rejects every member when the COMMIT fails, and leaves nothing of any', async () => {
    const h = holder();
    const a = driver.transaction(next('a'), GROUP);
    // A deferred foreign key is checked at COMMIT only: this member's savepoint releases fine,
    // and the group's COMMIT is refused.
    const orphan = driver.transaction((tx) => tx.run('INSERT INTO child (pid) VALUES (42)'), GROUP);
    const c = driver.transaction(next('c'), GROUP);
    h.release();
    await h.done;
    for (const p of [a, orphan, c]) await expect(p).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
    expect((await rows()).map((r) => r.who)).toEqual(['holder']);
    expect(await driver.all('SELECT * FROM child')).toEqual([]);
    expect(driver.db.inTransaction).toBe(false);
    // The connection goes on: the next write lands.
    expect(await driver.transaction(next('after'), GROUP)).toBe(1);
  });

  it('runs again the members a lost transaction took with it, once, in a fresh one', async () => {
    const h = holder();
    let aRuns = 0;
    const a = driver.transaction(async (tx) => {
      aRuns++;
      return next('a')(tx);
    }, GROUP);
    // What SQLite does on SQLITE_FULL or an I/O error: the whole transaction ends under the member.
    const lost = driver.transaction(async (tx) => {
      await tx.run('ROLLBACK');
      throw new Error('disk full');
    }, GROUP);
    const c = driver.transaction(next('c'), GROUP);
    h.release();
    await h.done;
    await expect(lost).rejects.toThrow('disk full');
    expect(await a).toBe(1);
    expect(await c).toBe(2);
    expect(aRuns).toBe(2);
    expect((await rows()).map((r) => r.who)).toEqual(['holder', 'a', 'c']);
  });

  it('collects the grouped writes asked for in one turn of the event loop once a COMMIT ran in it', async () => {
    await driver.transaction(next('first'), GROUP); // this turn has committed
    const before = driver.commits;
    // Asked for one after another in the same turn, none waiting in the queue: they still share.
    const writes = Array.from({ length: 10 }, (_, i) => driver.transaction(next(`w${i}`), GROUP));
    expect((await Promise.all(writes)).sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i + 2));
    expect(driver.commits - before).toBe(1);
  });

  it('stops waiting for joiners when nobody joins (a caller writing one at a time)', async () => {
    // A group that collects waits for the end of the event loop's turn. A caller writing one
    // record after another (a script, an import without concurrency) would pay that wait on
    // every write if the driver kept collecting: here the turns that pass during 200 such
    // writes are counted, by a setImmediate chain running beside them.
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const before = driver.commits;
    for (let i = 0; i < 200; i++) {
      await driver.transaction(next(`w${i}`), GROUP);
      // Let the queue settle in this same turn (as a request's handler that answers and the
      // next handler of the same turn would), so each write finds it idle after a COMMIT.
      for (let m = 0; m < 5; m++) await Promise.resolve();
    }
    counting = false;
    expect(driver.commits - before).toBe(200);
    expect((await rows()).length).toBe(200);
    // Waiting for joiners costs a turn per write (199 of them with the pause switched off);
    // after a wait nobody used the driver stops collecting for QUIET_MS, so a few turns pass
    // (one when the 200 writes fit in one pause; the bound leaves room for a slow machine).
    expect(turns).toBeLessThan(50);
  });
});
