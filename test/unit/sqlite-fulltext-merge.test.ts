import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../engine/store/index.js';
import { applyMergeSettings, IndexMerger, MERGE_SETTINGS, type MergeTiming } from '../../engine/store/sqlite/fulltext-merge.js';
import type { Actor, Store } from '../../engine/store/types.js';

/**
 * When the search index's FTS5 segments are merged (engine/store/sqlite/fulltext-merge.ts), on
 * real database files: a write only adds its segment, the merging waits until the writes
 * pause and then brings the index down to a few segments, writes that never pause are bounded
 * by FTS5's crisis merge, and a search finds the same records merged or not. A segment is one
 * `segid` in FTS5's `%_idx` table (every segment has at least one row there).
 */
let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ss-fts-merge-'));
  path = join(dir, 'schemasync.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const segmentsIn = (db: Database.Database): number => (db.prepare('SELECT COUNT(DISTINCT segid) AS n FROM _ss_fts_idx').get() as { n: number }).n;

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(ok(), what).toBe(true);
}

describe('the merger on an index of its own', () => {
  // The store's two index tables as fulltext.ts lays them out, with its merge settings.
  let db: Database.Database;
  let next = 0;
  beforeEach(() => {
    next = 0;
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec("CREATE TABLE _ss_search (id INTEGER PRIMARY KEY, text TEXT NOT NULL); CREATE VIRTUAL TABLE _ss_fts USING fts5(text, content='_ss_search', content_rowid='id', tokenize='unicode61 remove_diacritics 2', prefix='2 3 4')");
    applyMergeSettings(db);
  });
  afterEach(() => db.close());

  /** One write transaction of `rows` indexed rows, as a bulk write's: one new segment. */
  const writeBatch = (rows = 20): void => {
    const floor = next;
    db.transaction(() => {
      const insert = db.prepare('INSERT INTO _ss_search (id, text) VALUES (?, ?)');
      for (let i = 0; i < rows; i++) insert.run(++next, `deal number ${next} acme quinoa`);
      db.prepare('INSERT INTO _ss_fts (rowid, text) SELECT id, text FROM _ss_search WHERE id > ?').run(floor);
    })();
  };
  // Its queue as the driver's (driver.ts serial): the step runs at once, a throw becomes a rejection.
  const merger = (timing: MergeTiming) => new IndexMerger(db, (fn) => new Promise<boolean>((resolve) => resolve(fn())), timing);
  const found = (query: string): number[] => (db.prepare('SELECT rowid FROM _ss_fts WHERE _ss_fts MATCH ? ORDER BY rowid').pluck().all(query) as number[]);
  /** Writes for `ms`, each told to `m` as a store COMMIT is, 20 ms apart (as requests come); how many. */
  const burst = async (m: IndexMerger, ms: number): Promise<number> => {
    const t0 = performance.now();
    let n = 0;
    while (performance.now() - t0 < ms) {
      writeBatch();
      m.afterCommit();
      n++;
      await new Promise((r) => setTimeout(r, 20));
    }
    return n;
  };

  it('writes that keep coming are not merged, and once they pause the index is merged to a few segments', async () => {
    const m = merger({ quietMs: 600, pages: 16, busyMs: 60_000 });
    // Longer than the quiet period, with gaps far shorter than it: a merger that did not wait
    // for the pause (or FTS5 merging inside the writes, automerge) would have merged by the end.
    const batches = await burst(m, 1500);
    expect(segmentsIn(db)).toBe(batches);
    const before = found('"acme" "numb"*');
    await until('the index merged after the pause', () => segmentsIn(db) < MERGE_SETTINGS.usermerge);
    expect(found('"acme" "numb"*')).toEqual(before);
    expect(before).toHaveLength(next);
    expect(() => db.prepare("INSERT INTO _ss_fts(_ss_fts, rank) VALUES ('integrity-check', 1)").run()).not.toThrow();
  });

  it('writes that never pause get a merge step every busyMs, so segments do not pile up', async () => {
    const m = merger({ quietMs: 60_000, pages: 16, busyMs: 300 });
    const batches = await burst(m, 1500);
    // Never quiet for 60 s, yet merged along the way: far fewer segments than batches.
    expect(segmentsIn(db)).toBeLessThan(batches / 2);
    expect(found('"quinoa"')).toHaveLength(next);
  });

  it('once merged, a later burst shorter than busyMs is again left alone until it pauses', async () => {
    const m = merger({ quietMs: 300, pages: 16, busyMs: 1500 });
    await burst(m, 200);
    await until('the first burst merged', () => segmentsIn(db) < MERGE_SETTINGS.usermerge);
    // Idle for longer than busyMs: the put-off clock starts again with the next write.
    await new Promise((r) => setTimeout(r, 1800));
    const left = segmentsIn(db);
    // Five writes in one turn first: a merger still counting from the first burst would take
    // them at once (they are a level's worth to merge) instead of waiting.
    for (let i = 0; i < 5; i++) {
      writeBatch();
      m.afterCommit();
    }
    const n = 5 + (await burst(m, 1000));
    expect(segmentsIn(db)).toBe(left + n);
    await until('the second burst merged after its pause', () => segmentsIn(db) < MERGE_SETTINGS.usermerge);
  });

  it('a merge left unfinished (a write came) goes on at the next pause', async () => {
    for (let i = 0; i < 40; i++) writeBatch(50);
    // One page a step: the 40 segments take many steps, and a write lands among them.
    const m = merger({ quietMs: 100, pages: 1, busyMs: 60_000 });
    m.soon();
    await until('merging begun', () => segmentsIn(db) < 40);
    writeBatch();
    m.afterCommit();
    await until('the index merged after the write', () => segmentsIn(db) < MERGE_SETTINGS.usermerge);
    expect(found('"quinoa"')).toHaveLength(next);
    expect(() => db.prepare("INSERT INTO _ss_fts(_ss_fts, rank) VALUES ('integrity-check', 1)").run()).not.toThrow();
  });

  it("a step never waits for another connection's write lock: it is tried again after the next pause", async () => {
    for (let i = 0; i < 10; i++) writeBatch();
    // This connection waits 5 s for a lock (better-sqlite3's default busy timeout), as the store's does.
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    const m = merger({ quietMs: 100, pages: 16, busyMs: 60_000 });
    m.soon();
    // Steps are tried meanwhile; one that waited for the lock would hold this thread for 5 s.
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, 500));
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(segmentsIn(db)).toBe(10);
    other.exec('COMMIT');
    other.close();
    await until('merged once the lock is free', () => segmentsIn(db) < MERGE_SETTINGS.usermerge);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
  });

  it('writes that never pause are bounded: FTS5 merges a level once it holds crisismerge segments', () => {
    const crisis = MERGE_SETTINGS.crisismerge;
    for (let i = 0; i < crisis - 1; i++) writeBatch(2);
    expect(segmentsIn(db)).toBe(crisis - 1);
    writeBatch(2);
    expect(segmentsIn(db)).toBeLessThan(4);
    expect(found('"quinoa"')).toHaveLength(next);
  });
});

describe('the merger in the store', () => {
  let store: Store;
  const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };
  beforeEach(async () => {
    store = openStore({ path, filesDir: false, notice: () => {} });
    await store.createObject({ name: 'deal', attributes: [{ name: 'title', type: 'text' }] }, { kind: 'runtime' });
  });
  afterEach(() => store.close());
  const read = <T>(fn: (db: Database.Database) => T): T => {
    const db = new Database(path, { readonly: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  const hits = async (query: string): Promise<string[]> =>
    (await store.globalSearch({ query, objects: null, limit: 100 })).map((h) => h.id).sort();

  it('bulk writes leave a segment each, merged after they pause; a search finds the same records before and after', async () => {
    // Past the look the store takes at open (IndexMerger.soon): what merges below is the writes' doing.
    await new Promise((r) => setTimeout(r, 400));
    const ids: string[] = [];
    for (let b = 0; b < 12; b++) {
      const made = await store.bulkCreate('deal', Array.from({ length: 5 }, (_, i) => ({ title: `deal ${b}-${i} acme` })), actor);
      ids.push(...made.map((r) => r.id));
    }
    expect(read(segmentsIn)).toBeGreaterThanOrEqual(12);
    expect(await hits('acme')).toEqual([...ids].sort());
    await until('merged after the writes', () => read(segmentsIn) < MERGE_SETTINGS.usermerge);
    expect(await hits('acme')).toEqual([...ids].sort());
  });

  it('what a process left unmerged when it stopped is merged after the next open, with no write', async () => {
    for (let b = 0; b < 12; b++) await store.bulkCreate('deal', [{ title: `acme ${b} one` }, { title: `acme ${b} two` }], actor);
    // Closed before the writes' pause: nothing merged yet.
    await store.close();
    expect(read(segmentsIn)).toBeGreaterThanOrEqual(12);
    store = openStore({ path, filesDir: false, notice: () => {} });
    await until('merged after the open', () => read(segmentsIn) < MERGE_SETTINGS.usermerge);
    expect(await hits('acme')).toHaveLength(24);
  });

  it('an index with other merge settings (FTS5 merging inside writes) is given these on open, with no rebuild', async () => {
    await store.bulkCreate('deal', [{ title: 'acme one' }, { title: 'acme two' }], actor);
    await store.close();
    const db = new Database(path);
    // As the index was kept before: FTS5 merging inside the writes, 8 segments of a level at a
    // time, its crisis merge at FTS5's default (only FTS5's own commands write its config).
    db.exec("INSERT INTO _ss_fts(_ss_fts, rank) VALUES ('automerge', 8)");
    db.exec("INSERT INTO _ss_fts(_ss_fts, rank) VALUES ('crisismerge', 16)");
    db.close();
    const notices: string[] = [];
    store = openStore({ path, filesDir: false, notice: (line) => notices.push(line) });
    expect(notices).toEqual([]);
    const settings = read((d) => Object.fromEntries((d.prepare("SELECT k, v FROM _ss_fts_config WHERE k <> 'version'").all() as { k: string; v: number }[]).map((r) => [r.k, r.v])));
    expect(settings).toEqual(MERGE_SETTINGS);
    expect(await hits('acme')).toHaveLength(2);
  });
});
