import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckpointTiming } from '../../engine/store/sqlite/checkpointer.js';
import { SqliteDriver } from '../../engine/store/sqlite/driver.js';

/**
 * WAL checkpoints on a worker thread (engine/store/sqlite/checkpointer.ts), on a real database
 * file: a heavy writer's COMMITs stop copying the log back, a second connection on another
 * thread does it when the writes pause (or the log has waited long enough), nothing is lost,
 * and the store falls back to SQLite's own checkpoints when the worker is gone. Only a
 * checkpoint writes a WAL database's file, so its size says when one copied something.
 */
let dir: string;
let path: string;
let driver: SqliteDriver;
const ROW = 'x'.repeat(2000);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ss-ckpt-'));
  path = join(dir, 'db.sqlite');
  driver = new SqliteDriver(path);
  await driver.exec('CREATE TABLE t (n INTEGER PRIMARY KEY, v TEXT NOT NULL)');
});
afterEach(async () => {
  await driver.close();
  rmSync(dir, { recursive: true, force: true });
});

let next = 0;
/** About `mb` megabytes of rows in one transaction. */
const write = (d: SqliteDriver, mb: number): Promise<unknown> =>
  d.transaction((tx) => tx.runBatch('INSERT INTO t (n, v) VALUES (?, ?)', Array.from({ length: mb * 500 }, () => [next++, ROW])));
const autocheckpoint = (): number => driver.db.pragma('wal_autocheckpoint', { simple: true }) as number;

/** A new driver on the same file with its own checkpoint timing (the one afterEach closes). */
async function reopen(checkpoints: CheckpointTiming): Promise<void> {
  await driver.close();
  driver = new SqliteDriver(path, { checkpoints });
}

/**
 * Small transactions back to back for `ms`, a turn of the event loop between every few (as a
 * server's requests arrive) but never a pause a worker's tick could take for the writes'
 * end; `done` is asked after every few and ends them early.
 */
async function writeWithoutPause(ms: number, done: () => boolean): Promise<void> {
  const t0 = performance.now();
  while (performance.now() - t0 < ms && !done()) {
    for (let i = 0; i < 5; i++) await driver.transaction((tx) => tx.runBatch('INSERT INTO t (n, v) VALUES (?, ?)', Array.from({ length: 10 }, () => [next++, ROW])));
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(ok(), what).toBe(true);
}

describe('background WAL checkpoints', () => {
  it('a light writer starts no worker: its COMMITs checkpoint, past four times the log SQLite lets grow', async () => {
    for (let i = 0; i < 20; i++) await driver.run('INSERT INTO t (n, v) VALUES (?, ?)', [next++, 'small']);
    expect(driver.checkpointer.running).toBe(false);
    expect(autocheckpoint()).toBe(4000);
  });

  it('the COMMIT that first takes the log past 1,000 pages leaves it to the worker instead of copying it itself', async () => {
    const before = statSync(path).size;
    await write(driver, 5);
    expect(driver.checkpointer.running).toBe(true);
    // Only a checkpoint writes a WAL database's file, and the worker, just started, copies at
    // its first tick at the earliest.
    expect(statSync(path).size).toBe(before);
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(5 * 1024 * 1024);
  });

  it('a heavy writer: the worker copies the log while the store stays open, its COMMITs do not, and nothing is lost', async () => {
    await write(driver, 6);
    expect(driver.checkpointer.running).toBe(true);
    expect(autocheckpoint()).toBe(0);
    // From here only the worker writes the database file (a WAL database's file changes only
    // by checkpoints), so its growth while the store writes on is the worker's doing.
    const before = statSync(path).size;
    for (let i = 0; i < 3; i++) await write(driver, 2);
    await until('the database file took the log in', () => statSync(path).size >= before + 5 * 1024 * 1024);
    await driver.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    driver = new SqliteDriver(path);
    expect(await driver.get<{ n: number }>('SELECT count(*) AS n FROM t')).toEqual({ n: 12 * 500 });
  });

  // The WAL header's checkpoint sequence number (bytes 12-15) goes up each time SQLite starts
  // the log over (https://sqlite.org/fileformat2.html#walformat).
  const logStarts = (): number => {
    const fd = openSync(`${path}-wal`, 'r');
    try {
      const header = Buffer.alloc(16);
      readSync(fd, header, 0, 16, 0);
      return header.readUInt32BE(12);
    } finally {
      closeSync(fd);
    }
  };

  it('under steady writes the log starts over after the worker\'s checkpoints, and its file is cut back', async () => {
    // Copied every 300 ms of writes that never pause (the store's bound is longer).
    await reopen({ tickMs: 50, busyMs: 300, capBytes: 1024 ** 3 });
    await write(driver, 5);
    expect(driver.checkpointer.running).toBe(true);
    const first = logStarts();
    // Small transactions back to back, never a pause the worker's checkpoint could finish in
    // (a turn of the event loop between every 20, as a server's requests arrive): before the
    // store copied the worker's tail, the log grew for as long as they went on.
    // Until it starts over (well under a second here; the deadline is for a loaded machine,
    // where the worker's lower priority gets it little time).
    const t0 = performance.now();
    while (performance.now() - t0 < 10_000 && logStarts() === first) {
      for (let i = 0; i < 20; i++) await driver.transaction((tx) => tx.run('INSERT INTO t (n, v) VALUES (?, ?)', [next++, ROW]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(logStarts()).toBeGreaterThan(first);
    // journal_size_limit: a log started over is cut back to 16 MB (more may be written since).
    expect(driver.db.pragma('journal_size_limit', { simple: true })).toBe(4 * 4096 * 1000);
  });

  /**
   * With `checkpoints`: a heavy write (the worker starts), then writes without a pause for up
   * to `ms`, or until a checkpoint has copied something (the database file grew).
   */
  async function writeOnceWorkerRuns(checkpoints: CheckpointTiming, ms: number): Promise<{ before: number; copied: boolean }> {
    await reopen(checkpoints);
    await write(driver, 5);
    await until('the worker', () => driver.checkpointer.running);
    const before = statSync(path).size;
    const copied = (): boolean => statSync(path).size > before;
    await writeWithoutPause(ms, copied);
    return { before, copied: copied() };
  }

  it('a burst is copied once it ends, not while it lasts', async () => {
    // Ticks far apart, so only a stall of the test itself this long could look like a pause.
    const { before, copied } = await writeOnceWorkerRuns({ tickMs: 250, busyMs: 60_000, capBytes: 1024 ** 3 }, 1200);
    expect(copied, 'nothing copied while the writes went on').toBe(false);
    await until('the log copied after the writes', () => statSync(path).size >= before + 5 * 1024 * 1024);
    // Idle now (the worker looks less often): the next burst is noticed and copied after it too.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = statSync(path).size;
    await write(driver, 3);
    await until('the next burst copied', () => statSync(path).size >= after + 3_000_000);
  });

  it('writes that never pause are copied after busyMs of them', async () => {
    const { copied } = await writeOnceWorkerRuns({ tickMs: 50, busyMs: 300, capBytes: 1024 ** 3 }, 10_000);
    expect(copied, 'copied while the writes went on').toBe(true);
  });

  it('writes that never pause are copied once the log passes capBytes', async () => {
    const { copied } = await writeOnceWorkerRuns({ tickMs: 50, busyMs: 60_000, capBytes: 8 * 1024 * 1024 }, 10_000);
    expect(copied, 'copied while the writes went on').toBe(true);
    // Copied at the cap, not before: the log file had reached it.
    expect(statSync(`${path}-wal`).size).toBeGreaterThanOrEqual(8 * 1024 * 1024);
  });

  it('a worker that dies: the COMMITs checkpoint again', async () => {
    await write(driver, 5);
    expect(driver.checkpointer.running).toBe(true);
    const worker = (driver.checkpointer as unknown as { worker: { terminate(): Promise<number> } }).worker;
    await worker.terminate();
    await until('the fallback', () => !driver.checkpointer.running);
    expect(autocheckpoint()).toBe(1000);
    await write(driver, 1);
    expect(await driver.get<{ n: number }>('SELECT count(*) AS n FROM t')).toEqual({ n: 6 * 500 });
  });

  it('two connections writing at once while both checkpoint on their workers: every row, and an intact file', async () => {
    const other = new SqliteDriver(path);
    const first = next;
    try {
      await write(driver, 5);
      await write(other, 5);
      expect(driver.checkpointer.running && other.checkpointer.running).toBe(true);
      // Interleaved writers (each waits for the write lock in turn) and readers, for over a
      // second: several checkpoints of each worker land among them.
      const t0 = performance.now();
      let reads = 0;
      while (performance.now() - t0 < 1200) {
        await Promise.all([write(driver, 1), write(other, 1), driver.get('SELECT count(*) AS n FROM t').then(() => reads++)]);
      }
      const total = (await other.get<{ n: number }>('SELECT count(*) AS n FROM t'))!.n;
      expect(total).toBe(next - first);
      expect(reads).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
    await driver.close();
    driver = new SqliteDriver(path);
    expect(driver.db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect((await driver.get<{ n: number }>('SELECT count(*) AS n FROM t'))!.n).toBe(next - first);
  });
});
