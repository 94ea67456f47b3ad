import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openStore } from '../../engine/store/index.js';
import { CATCH_UP_DELAY_MS } from '../../engine/store/sqlite/fulltext-pending.js';
import type { Actor, Store } from '../../engine/store/types.js';
import { codeOf } from '../support/service-error.js';

// Single record writes leave their FTS5 entries to the next search or to a pause in the writes
// (engine/store/sqlite/fulltext-pending.ts), which saves FTS5 a segment per transaction. What a
// user relies on must not move: a record written, changed or deleted is found, or no longer
// found, by the very next search (contract.md §3), from this process or another one on the same
// file; a refused write leaves nothing; the index is exact once caught up. A real SQLite file;
// a second connection reads what is on disk.

let dir: string;
let path: string;
let store: Store;
const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };

beforeEach(async () => {
  // The catch-up between searches runs on a timer: held still here, so what each test sees
  // waiting is what the writes left (the test that wants it moves it on).
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  dir = mkdtempSync(join(tmpdir(), 'ss-fts-pending-'));
  path = join(dir, 'schemasync.db');
  store = openStore({ path, filesDir: false, notice: () => {} });
  await store.createObject({ name: 'deal', attributes: [{ name: 'code', type: 'text', unique: true }, { name: 'title', type: 'text' }] }, { kind: 'runtime' });
});
afterEach(async () => {
  vi.useRealTimers();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The file as another connection sees it: rows waiting for their entries, entries waiting to be deleted, FTS5 segments, and FTS5's own check of the index against its rows. */
function onDisk(): { pending: number; gone: number; segments: number; intact: boolean } {
  const db = new Database(path);
  try {
    const pending = db.prepare('SELECT COUNT(*) AS n FROM _ss_search_pending').pluck().get() as number;
    const gone = db.prepare('SELECT COUNT(*) AS n FROM _ss_search_gone').pluck().get() as number;
    const segments = db.prepare('SELECT COUNT(DISTINCT segid) AS n FROM _ss_fts_idx').pluck().get() as number;
    let intact = true;
    try {
      db.prepare("INSERT INTO _ss_fts(_ss_fts, rank) VALUES ('integrity-check', 1)").run();
    } catch {
      intact = false;
    }
    return { pending, gone, segments, intact };
  } finally {
    db.close();
  }
}

const idsIn = (table: string): number[] => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(`SELECT id FROM ${table} ORDER BY id`).pluck().all() as number[];
  } finally {
    db.close();
  }
};
const hits = async (s: Store, query: string): Promise<string[]> => (await s.globalSearch({ query, objects: null, limit: 100 })).map((h) => `${h.attribute} ${h.id}`).sort();

describe('single writes reach the search index by the next search', () => {
  it('creates write no FTS5 segment of their own; the next search finds them all and leaves the index exact', async () => {
    const before = onDisk().segments;
    const made = await Promise.all(Array.from({ length: 20 }, (_, i) => store.createRecord('deal', { code: `C-${i}`, title: `wombat ${i}` }, actor)));
    const waiting = onDisk();
    expect(waiting.pending).toBe(20);
    expect(waiting.segments).toBe(before);
    expect(await hits(store, 'wombat')).toEqual(made.map((r) => `title ${r.id}`).sort());
    const after = onDisk();
    expect(after).toEqual({ pending: 0, gone: 0, segments: before + 1, intact: true });
  });

  it('a record changed or deleted before any search is found by its new text only, and the index stays exact', async () => {
    const a = await store.createRecord('deal', { code: 'A', title: 'platypus' }, actor);
    const b = await store.createRecord('deal', { code: 'B', title: 'echidna' }, actor);
    await store.updateRecord('deal', a.id, { title: 'quokka' }, '*', actor);
    await store.deleteRecord('deal', b.id);
    expect(onDisk()).toMatchObject({ pending: 1, gone: 0 }); // neither ever reached FTS5
    expect(await hits(store, 'platypus')).toEqual([]);
    expect(await hits(store, 'echidna')).toEqual([]);
    expect(await hits(store, 'quokka')).toEqual([`title ${a.id}`]);
    expect(onDisk()).toMatchObject({ pending: 0, intact: true });
  });

  it('a record changed or deleted after it was indexed loses its old entry, and a write in between adds no segment', async () => {
    const a = await store.createRecord('deal', { code: 'A', title: 'platypus' }, actor);
    const b = await store.createRecord('deal', { code: 'B', title: 'echidna' }, actor);
    expect(await hits(store, 'platypus echidna')).toEqual([]); // both words in one record: none
    expect((await hits(store, 'echidna')).length).toBe(1);
    const indexed = onDisk();
    expect(indexed).toMatchObject({ pending: 0, gone: 0, intact: true });
    await store.updateRecord('deal', a.id, { title: 'quokka' }, '*', actor);
    await store.deleteRecord('deal', b.id);
    // Both old entries wait to be deleted, the new text to be added; FTS5 itself is untouched.
    expect(onDisk()).toEqual({ pending: 1, gone: 2, segments: indexed.segments, intact: false });
    expect(await hits(store, 'platypus')).toEqual([]);
    expect(await hits(store, 'echidna')).toEqual([]);
    expect(await hits(store, 'quokka')).toEqual([`title ${a.id}`]);
    expect(onDisk()).toMatchObject({ pending: 0, gone: 0, intact: true });
    // Changed twice and deleted between two searches: one deletion of what FTS5 held.
    await store.updateRecord('deal', a.id, { title: 'wombat' }, '*', actor);
    await store.updateRecord('deal', a.id, { title: 'koala' }, '*', actor);
    expect(onDisk()).toMatchObject({ pending: 1, gone: 1 });
    await store.deleteRecord('deal', a.id);
    expect(onDisk()).toMatchObject({ pending: 0, gone: 1 });
    expect(await hits(store, 'quokka')).toEqual([]);
    expect(await hits(store, 'koala')).toEqual([]);
    expect(onDisk()).toMatchObject({ pending: 0, gone: 0, intact: true });
  });

  it('another process on the same file finds a record the first one wrote, by its very next search', async () => {
    const other = openStore({ path, filesDir: false, notice: () => {} });
    try {
      for (let i = 0; i < 5; i++) {
        const r = await store.createRecord('deal', { code: `X-${i}`, title: `bilby${i}` }, actor);
        expect(await hits(other, `bilby${i}`)).toEqual([`title ${r.id}`]);
        const s = await other.createRecord('deal', { code: `Y-${i}`, title: `numbat${i}` }, actor);
        expect(await hits(store, `numbat${i}`)).toEqual([`title ${s.id}`]);
      }
      expect(onDisk()).toMatchObject({ pending: 0, intact: true });
    } finally {
      await other.close();
    }
  });

  it('concurrent writers on two connections, each searching right after its write: every search finds it as written, and the index ends exact', async () => {
    const other = openStore({ path, filesDir: false, notice: () => {} });
    try {
      // A quoted word matches it whole: "emu3x1" does not find "emu3x1b".
      const exact = (s: Store, word: string) => hits(s, `"${word}"`);
      const client = async (c: number): Promise<void> => {
        const s = c % 2 ? other : store;
        for (let i = 0; i < 8; i++) {
          const word = `emu${c}x${i}`;
          const r = await s.createRecord('deal', { code: `K-${c}-${i}`, title: word }, actor);
          expect(await exact(s, word)).toEqual([`title ${r.id}`]);
          if (i % 3 === 0) {
            await s.updateRecord('deal', r.id, { title: `${word}b` }, '*', actor);
            expect(await exact(s, word)).toEqual([]);
            expect(await exact(s, `${word}b`)).toEqual([`title ${r.id}`]);
          }
          if (i % 4 === 1) {
            await s.deleteRecord('deal', r.id);
            expect(await exact(s, word)).toEqual([]);
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));
      expect((await hits(store, 'emu')).length).toBe(8 * 6); // 8 records each, 2 of them deleted
      expect(onDisk()).toMatchObject({ pending: 0, gone: 0, intact: true });
    } finally {
      await other.close();
    }
  });

  it('a refused write marks nothing, inside a larger transaction too', async () => {
    await store.createRecord('deal', { code: 'A', title: 'dingo' }, actor);
    expect(await codeOf(() => store.createRecord('deal', { code: 'A', title: 'dingo again' }, actor))).toBe('SCHEMA_VALIDATION_FAILED');
    await store
      .transaction(async (tx) => {
        await tx.createRecord('deal', { code: 'B', title: 'dingo in a rolled back transaction' }, actor);
        throw new Error('give up');
      })
      .catch(() => undefined);
    expect(onDisk().pending).toBe(1);
    expect((await hits(store, 'dingo')).length).toBe(1);
    expect(onDisk()).toMatchObject({ pending: 0, intact: true });
  });

  it('a search inside a transaction finds the records written before it in that transaction', async () => {
    const found = await store.transaction(async (tx) => {
      const r = await tx.createRecord('deal', { code: 'T', title: 'kookaburra' }, actor);
      return { id: r.id, hits: await hits(tx, 'kookaburra') };
    });
    expect(found.hits).toEqual([`title ${found.id}`]);
    expect(onDisk()).toMatchObject({ pending: 0, intact: true });
  });

  it('without a search, the rows are indexed a moment after the first write, in one segment', async () => {
    const before = onDisk().segments;
    for (let i = 0; i < 5; i++) await store.createRecord('deal', { code: `P-${i}`, title: `wallaby ${i}` }, actor);
    vi.advanceTimersByTime(CATCH_UP_DELAY_MS - 1);
    await Promise.resolve();
    expect(onDisk().pending).toBe(5);
    vi.advanceTimersByTime(1);
    await vi.waitFor(() => expect(onDisk()).toEqual({ pending: 0, gone: 0, segments: before + 1, intact: true }));
    // Armed again by the next write.
    await store.createRecord('deal', { code: 'P-5', title: 'wallaby 5' }, actor);
    expect(onDisk().pending).toBe(1);
    vi.advanceTimersByTime(CATCH_UP_DELAY_MS);
    await vi.waitFor(() => expect(onDisk().pending).toBe(0));
  });

  it('rows left waiting when a store closes are indexed when the file is opened again', async () => {
    await store.createRecord('deal', { code: 'R', title: 'bandicoot' }, actor);
    await store.close();
    expect(onDisk().pending).toBe(1);
    store = openStore({ path, filesDir: false, notice: () => {} });
    await store.listObjects();
    expect(onDisk()).toMatchObject({ pending: 0, intact: true });
    expect((await hits(store, 'bandicoot')).length).toBe(1);
  });

  it('schema changes with rows waiting: an attribute renamed, the object dropped and made again', async () => {
    const a = await store.createRecord('deal', { code: 'A', title: 'possum' }, actor);
    await store.updateAttribute('deal', 'title', { name: 'headline' });
    expect(await hits(store, 'possum')).toEqual([`headline ${a.id}`]);
    await store.createRecord('deal', { code: 'B', headline: 'glider' }, actor);
    await store.deleteObject('deal', { force: true });
    // The indexed record's entry waits to be deleted; the one that never reached FTS5 is just gone.
    expect(onDisk()).toMatchObject({ pending: 0, gone: 1 });
    // The object made again takes the code given up (its first record the very id of the old
    // one's entry): the old entry is deleted before the new one is added.
    const goneId = idsIn('_ss_search_gone');
    await store.createObject({ name: 'deal', attributes: [{ name: 'title', type: 'text' }] }, { kind: 'runtime' });
    const c = await store.createRecord('deal', { title: 'glider' }, actor);
    expect(idsIn('_ss_search_pending')).toEqual(goneId);
    expect(await hits(store, 'glider')).toEqual([`title ${c.id}`]);
    expect(await hits(store, 'possum')).toEqual([]);
    expect(onDisk()).toMatchObject({ pending: 0, gone: 0, intact: true });
  });
});
