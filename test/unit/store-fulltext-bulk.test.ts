import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../engine/store/index.js';
import { addWaiting } from '../../engine/store/sqlite/fulltext-pending.js';
import type { Actor, Store } from '../../engine/store/types.js';
import { codeOf } from '../support/service-error.js';

// The search index under bulk writes (contract.md §3 "Cross-object search": a record written,
// changed or deleted is found, or no longer found, by the very next search). Bulk writes
// index their rows in one set-based pass with the per-row triggers gated off; these tests
// hold that pass to the same result the triggers give, on a real SQLite file, and check the
// gate never outlives the write that set it (a rollback, a caught failure, another connection).

let dir: string;
let path: string;
let store: Store;
const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ss-fts-bulk-'));
  path = join(dir, 'schemasync.db');
  store = openStore({ path, filesDir: false, notice: () => {} });
  await store.createObject(
    {
      name: 'deal',
      attributes: [
        { name: 'code', type: 'text', unique: true },
        { name: 'title', type: 'text' },
        { name: 'stage', type: 'select', options: ['lead', 'won'] },
        { name: 'tags', type: 'multiselect', options: ['red', 'blue'] },
        { name: 'amount', type: 'number' },
      ],
    },
    { kind: 'runtime' },
  );
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What the index holds, read on a connection of its own: rows, FTS5's own check, the gate, the record triggers. */
function inspect(): { rows: string[]; gate: number; intact: boolean; triggers: string[] } {
  const db = new Database(path);
  try {
    // A record's row is named by its object's code and its rowid (fulltext.ts RowIds).
    const rows = (
      db
        .prepare(
          'SELECT l.object AS object, r.id AS record_id, s.text AS text FROM _ss_search s JOIN _ss_search_layout l ON l.code = s.id >> 32 ' +
            'JOIN r_deal r ON r._rowid_ = s.id - (l.code << 32) WHERE s.id >= 4294967296 ORDER BY r.id',
        )
        .all() as Record<string, string>[]
    ).map(
      (r) => `${r['object']}/${r['record_id']}=${r['text']}`,
    );
    const gate = (db.prepare('SELECT COUNT(*) AS n FROM _ss_search_gate').get() as { n: number }).n;
    // A bulk insert takes its table's INSERT trigger down and puts it back (fulltext-bulk.ts).
    const triggers = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE '_ss_search_a%_r_%' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    let intact = true;
    // FTS5's side of single writes is applied by the next search (fulltext-pending.ts): it is
    // applied here as a search would, and taken back, so the file is left as it was.
    db.exec('BEGIN');
    try {
      addWaiting((sql) => db.prepare(sql));
      // rank 1: the FTS index is compared with its content table, row by row.
      db.prepare("INSERT INTO _ss_fts(_ss_fts, rank) VALUES ('integrity-check', 1)").run();
    } catch {
      intact = false;
    } finally {
      db.exec('ROLLBACK');
    }
    return { rows, gate, intact, triggers };
  } finally {
    db.close();
  }
}

/**
 * The index rows the records' current values call for (what the per-row triggers write): one
 * per record with any text, its text-like attributes' values in the object's order, joined by
 * the separator word (engine/store/sqlite/fulltext.ts).
 */
async function expectedRows(): Promise<string[]> {
  const out: string[] = [];
  for (const r of (await store.search('deal', { limit: 500 })).records) {
    const texts = ['code', 'title', 'stage', 'tags'].map((a) => {
      const v = r.values[a];
      return (Array.isArray(v) ? v.join(', ') : (v as string | null)) ?? '';
    });
    if (texts.some((t) => t !== '')) out.push(`deal/${r.id}=${texts.join(' \uE000 ')}`);
  }
  return out.sort();
}

const hitIds = async (query: string): Promise<string[]> => (await store.globalSearch({ query, objects: null, limit: 100 })).map((h) => h.id).sort();

const row = (i: number): Record<string, unknown> => ({
  code: `C-${i}`,
  title: i % 7 === 0 ? null : i % 11 === 0 ? '' : `Deal number ${i}`,
  stage: i % 2 ? 'lead' : 'won',
  tags: i % 3 === 0 ? ['red', 'blue'] : [],
  amount: i,
});

describe('bulk writes keep the search index exact', () => {
  it('bulk-create indexes every text-like value of every record, and nothing else', async () => {
    await store.createRecord('deal', row(1000), actor); // rows before the batch stay as they were
    const triggersBefore = inspect().triggers;
    expect(triggersBefore).toEqual(['_ss_search_ad_r_deal', '_ss_search_ai_r_deal', '_ss_search_au_r_deal']);
    const made = await store.bulkCreate('deal', Array.from({ length: 300 }, (_, i) => row(i)), actor);
    const state = inspect();
    expect(state.rows.sort()).toEqual(await expectedRows());
    expect(state.intact).toBe(true);
    expect(state.gate).toBe(0);
    expect(state.triggers).toEqual(triggersBefore);
    expect(await hitIds('"Deal number 43"')).toEqual([made[43]!.id]);
    expect(await hitIds('"Deal number 42"')).toEqual([]); // its title is null
    expect((await hitIds('red')).length).toBe(100);
  });

  it('a failed bulk (a unique clash at item 500) leaves neither rows nor index entries; writes after it still index', async () => {
    await store.createRecord('deal', { code: 'TAKEN', title: 'Original holder' }, actor);
    const before = inspect();
    const batch = Array.from({ length: 1000 }, (_, i) => (i === 500 ? { ...row(i), code: 'TAKEN' } : row(i)));
    expect(await codeOf(() => store.bulkCreate('deal', batch, actor))).toBe('SCHEMA_VALIDATION_FAILED');
    expect((await store.search('deal', { limit: 1 })).total).toBe(1);
    expect(inspect()).toEqual(before);
    expect(await hitIds('number')).toEqual([]);

    // The triggers are live again for single writes, and the next bulk indexes too.
    const one = await store.createRecord('deal', { code: 'SOLO', title: 'Quixotic single' }, actor);
    expect(await hitIds('quixotic')).toEqual([one.id]);
    const two = await store.bulkCreate('deal', [row(1), row(2)], actor);
    expect(await hitIds('"deal number 1"')).toEqual([two[0]!.id]);
    const state = inspect();
    expect(state.rows.sort()).toEqual(await expectedRows());
    expect(state.intact).toBe(true);
    expect(state.gate).toBe(0);
  });

  it('a bulk that fails inside a larger transaction leaves the gate closed for the rest of it', async () => {
    const solo = await store.transaction(async (tx) => {
      expect(await codeOf(() => tx.bulkCreate('deal', [row(1), { ...row(2), code: 'C-1' }, row(3)], actor))).toBe('SCHEMA_VALIDATION_FAILED');
      return tx.createRecord('deal', { code: 'IN-TX', title: 'Zanzibar inside' }, actor);
    });
    expect(await hitIds('zanzibar')).toEqual([solo.id]);
    const state = inspect();
    expect(state.rows.sort()).toEqual(await expectedRows());
    expect(state.gate).toBe(0);
    expect(state.intact).toBe(true);
  });

  it('bulk-update re-indexes the rows it changes (a unique swap included), and a number-only update leaves them', async () => {
    const [a, b, c] = await store.bulkCreate('deal', [row(1), row(2), row(3)], actor);
    await store.bulkUpdate(
      'deal',
      [
        { id: a!.id, values: { code: 'C-2', title: 'Renamed alpha', tags: ['blue'] } },
        { id: b!.id, values: { code: 'C-1', title: null } },
      ],
      actor,
    );
    expect(await hitIds('renamed')).toEqual([a!.id]);
    expect(await hitIds('"deal number 2"')).toEqual([]);
    expect(await hitIds('"c 2"')).toEqual([a!.id]);
    let state = inspect();
    expect(state.rows.sort()).toEqual(await expectedRows());
    expect(state.intact).toBe(true);

    await store.bulkUpdate('deal', [{ id: b!.id, values: { amount: 5 } }, { id: c!.id, values: { amount: 6 } }], actor);
    state = inspect();
    expect(state.rows.sort()).toEqual(await expectedRows());
    expect(state.intact).toBe(true);
    expect(state.gate).toBe(0);
  });

  it('bulk-delete removes the rows of exactly the deleted records', async () => {
    const made = await store.bulkCreate('deal', Array.from({ length: 20 }, (_, i) => row(i)), actor);
    await store.bulkDelete('deal', made.slice(0, 10).map((r) => r.id));
    const state = inspect();
    expect(state.rows.sort()).toEqual(await expectedRows());
    expect(state.rows.length).toBeGreaterThan(0);
    expect(state.intact).toBe(true);
    expect(await hitIds('"deal number 3"')).toEqual([]);
    expect(await hitIds('"deal number 13"')).toEqual([made[13]!.id]);
  });

  it('two connections on one file, bulk and single writes interleaved: every record indexed once', async () => {
    const other = openStore({ path, filesDir: false, notice: () => {} });
    try {
      const writes: Promise<unknown>[] = [];
      for (let k = 0; k < 6; k++) {
        const s = k % 2 ? other : store;
        writes.push(s.bulkCreate('deal', Array.from({ length: 50 }, (_, i) => row(k * 100 + i)), actor));
        writes.push(s.createRecord('deal', { code: `S-${k}`, title: `single ${k}` }, actor));
        // A bulk that fails on one connection while the other writes.
        writes.push(codeOf(() => s.bulkCreate('deal', [row(9000 + k), { ...row(9100 + k), code: `C-${9000 + k}` }], actor)));
      }
      await Promise.all(writes);
      const state = inspect();
      expect(state.rows.sort()).toEqual(await expectedRows());
      expect(state.rows.length).toBe(306); // every record has a code: one row each
      expect(state.intact).toBe(true);
      expect(state.gate).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe('bulk writes across schema changes', () => {
  // A bulk write's index statements are cached between batches (fulltext.ts Prepare); the
  // same statement texts come back after the object is dropped and made again, or gains a
  // text attribute, and must act on the table and index as they are now.
  it('bulk writes after an attribute is added and after the object is dropped and made again index exactly', async () => {
    await store.bulkCreate('deal', Array.from({ length: 20 }, (_, i) => row(i)), actor);
    await store.addAttribute('deal', { name: 'summary', type: 'text' }, { kind: 'runtime' });
    const more = await store.bulkCreate('deal', Array.from({ length: 20 }, (_, i) => ({ ...row(100 + i), summary: `Quarterly ${i}` })), actor);
    expect(await hitIds('"quarterly 7"')).toEqual([more[7]!.id]);
    expect(inspect().intact).toBe(true);

    await store.deleteObject('deal', { force: true });
    await store.createObject({ name: 'deal', attributes: [{ name: 'title', type: 'text' }] }, { kind: 'runtime' });
    const again = await store.bulkCreate('deal', Array.from({ length: 30 }, (_, i) => ({ title: `Renewed ${i}` })), actor);
    await store.bulkUpdate('deal', again.slice(0, 2).map((r, i) => ({ id: r.id, ifMatch: r.version, values: { title: `Changed ${i}` } })), actor);
    const state = inspect();
    expect(state.intact).toBe(true);
    expect(state.gate).toBe(0);
    expect(state.rows).toHaveLength(30);
    expect(await hitIds('renewed')).toHaveLength(28);
    expect(await hitIds('"changed 1"')).toEqual([again[1]!.id]);
    expect(await hitIds('quarterly')).toEqual([]);
  });
});

describe('the index layout on open', () => {
  it('a store whose index is current opens without a word, and its records are still found', async () => {
    const made = await store.bulkCreate('deal', [row(1), row(2)], actor);
    await store.close();
    const notices: string[] = [];
    store = openStore({ path, filesDir: false, notice: (line) => notices.push(line) });
    expect(await hitIds('"deal number 2"')).toEqual([made[1]!.id]);
    expect(notices).toEqual([]);
  });

  it('an index of an older layout is rebuilt on open, saying so, and bulk writes index into the new one', async () => {
    await store.bulkCreate('deal', [row(1), row(2)], actor);
    await store.close();
    const db = new Database(path);
    // What a layout-1 database lacks: the gate table (and the record_rowid column the rebuild adds).
    db.exec("DROP TABLE _ss_search_gate; UPDATE _ss_meta SET value = '1' WHERE key = 'search_layout'");
    db.close();
    const notices: string[] = [];
    store = openStore({ path, filesDir: false, notice: (line) => notices.push(line) });
    expect(notices).toEqual(['schemasync: search index rebuilt (layout 1 was older): 2 records in 1 objects']);
    const more = await store.bulkCreate('deal', [row(3), row(4)], actor);
    expect(await hitIds('"deal number 4"')).toEqual([more[1]!.id]);
    const state = inspect();
    expect(state.rows.sort()).toEqual(await expectedRows());
    expect(state.intact).toBe(true);
  });
});

// A row's id names its object by code and its record by rowid (engine/store/sqlite/fulltext.ts
// RowIds): codes must never name another object's rows, and a rowid must never leave its range.
describe('index row ids', () => {
  const runtime = { kind: 'runtime' } as const;
  const objectsOf = async (query: string): Promise<string[]> =>
    (await store.globalSearch({ query, objects: null, limit: 100 })).map((h) => `${h.object}/${h.attribute}`).sort();
  const codes = (): Record<string, number> => {
    const db = new Database(path, { readonly: true });
    try {
      return Object.fromEntries((db.prepare('SELECT object, code FROM _ss_search_layout').all() as { object: string; code: number }[]).map((r) => [r.object, r.code]));
    } finally {
      db.close();
    }
  };

  it('a code given up by a dropped object or one that lost its text goes to another, and no old row is found under it', async () => {
    await store.createObject({ name: 'memo', attributes: [{ name: 'body', type: 'text' }] }, runtime);
    await store.bulkCreate('memo', [{ body: 'Wombat one' }, { body: 'Wombat two' }], actor);
    await store.bulkCreate('deal', [row(1), row(2)], actor);
    expect(codes()).toEqual({ deal: 1, memo: 2 });
    await store.deleteObject('memo', { force: true });
    await store.createObject({ name: 'note', attributes: [{ name: 'text', type: 'text' }] }, runtime);
    const [n] = await store.bulkCreate('note', [{ text: 'Quokka' }, { text: 'Numbat' }], actor);
    expect(codes()).toEqual({ deal: 1, note: 2 });
    expect(await objectsOf('wombat')).toEqual([]);
    expect((await store.globalSearch({ query: 'quokka', objects: null, limit: 10 })).map((h) => [h.object, h.id])).toEqual([['note', n!.id]]);

    // deal loses every text attribute but code; then code goes too (no layout, no code), and a new one comes.
    for (const a of ['title', 'stage', 'tags', 'code']) await store.deleteAttribute('deal', a);
    expect(codes()).toEqual({ note: 2 });
    expect(await objectsOf('deal')).toEqual([]);
    await store.addAttribute('deal', { name: 'summary', type: 'text' }, runtime);
    await store.bulkCreate('deal', [{ summary: 'Bilby' }, { summary: 'Wallaby' }], actor);
    expect(await objectsOf('bilby')).toEqual(['deal/summary']);
    expect(await objectsOf('quokka')).toEqual(['note/text']);
    expect(inspect().intact).toBe(true);
  });

  it('a record whose rowid would leave its range is refused, by the trigger and by the bulk pass, and nothing is written', async () => {
    await store.bulkCreate('deal', [row(1), row(2)], actor);
    await store.close();
    const db = new Database(path);
    // The last rowid that fits, then one past it (a rowid this store never draws by itself).
    db.prepare("INSERT INTO r_deal (_rowid_, id, version, created_at, updated_at, code, title) VALUES (4294967295, '00000000-0000-7000-8000-000000000001', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'C-x', 'Edge of range')").run();
    expect(() =>
      db.prepare("INSERT INTO r_deal (_rowid_, id, version, created_at, updated_at, code, title) VALUES (4294967296, '00000000-0000-7000-8000-000000000002', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'C-y', 'Past it')").run(),
    ).toThrow(/does not fit the search index/);
    db.close();
    store = openStore({ path, filesDir: false, notice: () => {} });
    expect(await objectsOf('"edge of range"')).toEqual(['deal/title']);
    await expect(store.bulkCreate('deal', [row(3), row(4)], actor)).rejects.toThrow();
    expect((await store.search('deal', { limit: 10 })).records).toHaveLength(3);
    expect(inspect().intact).toBe(true);
  });
});
