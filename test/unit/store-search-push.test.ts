import { describe, expect, it } from 'vitest';
import type { Declaration } from '../../engine/model/declaration.js';
import type { SqlStore } from '../../engine/store/sql/store.js';
import { freshSqliteStore, type OpenedSqliteStore } from '../support/sqlite-store.js';
import type { Actor } from '../../engine/store/types.js';
import { errorOf } from '../support/service-error.js';

/**
 * The search index across a push that changes several attributes of one object (issue 14):
 * a push leaves each touched object's search triggers gated (down once its DDL needs it) and makes
 * them once at its end (FulltextPort.schemaBatch). Right after such a push the index holds
 * every text attribute under its new name and type, and the triggers index later writes;
 * a push that fails halfway leaves the triggers exactly as they were.
 */
let store: SqlStore;
let db: OpenedSqliteStore['db'];
const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };

freshSqliteStore('ss-search-push-', (opened) => ({ store, db } = opened));

const before: Declaration = {
  objects: {
    note: {
      attributes: {
        title: { type: 'text' },
        body: { type: 'text' },
        code: { type: 'integer' },
        legacy: { type: 'text' },
      },
    },
    other: { attributes: { name: { type: 'text' } } },
  },
  views: {},
};

/** One push: a rename, a type change to text, an added text attribute with a default, a drop. */
const after: Declaration = {
  objects: {
    note: {
      attributes: {
        title: { type: 'text' },
        text: { type: 'text', renamedFrom: 'body' },
        code: { type: 'text' },
        summary: { type: 'text', default: 'quokka' },
      },
    },
    other: { attributes: { name: { type: 'text' } } },
  },
  views: {},
};

/** What global search finds for `query`: `object.attribute record-id`, sorted. */
const found = async (query: string): Promise<string[]> => (await store.globalSearch({ query, objects: null, limit: 100 })).map((h) => `${h.object}.${h.attribute} ${h.id}`).sort();
const hit = (where: string, r: { id: string }): string => `${where} ${r.id}`;

/** The record table's search triggers as SQLite stores them. */
const triggers = (table: string): { name: string; sql: string }[] =>
  db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ? ORDER BY name").all(table) as { name: string; sql: string }[];

describe('search after a push changing several attributes of one object', () => {
  it('finds records by the renamed, retyped and added text attributes, and indexes writes made after it', async () => {
    await store.pushSource('s', before, {});
    const a = await store.createRecord('note', { title: 'first', body: 'wombat', code: 4711, legacy: 'platypus' }, actor);
    const b = await store.createRecord('note', { title: 'second', body: 'echidna', code: 12 }, actor);
    const o = await store.createRecord('other', { name: 'wombat keeper' }, actor);
    expect(await found('4711')).toEqual([]); // an integer is not indexed

    const res = await store.pushSource('s', after, { allowDestructive: true });
    expect(res.plan.steps.map((s) => `${s.action} ${s.target}`).sort()).toEqual(
      ['add_attribute note.summary', 'change_attribute note.code', 'drop_attribute note.legacy', 'rename_attribute note.text'].sort(),
    );

    expect(await found('wombat')).toEqual([hit('note.text', a), hit('other.name', o)].sort());
    expect(await found('4711')).toEqual([hit('note.code', a)]);
    expect(await found('quokka')).toEqual([hit('note.summary', a), hit('note.summary', b)].sort());
    expect(await found('platypus')).toEqual([]);

    // The triggers name the object's text attributes as they are now: writes after the push are indexed.
    const c = await store.createRecord('note', { title: 'third', text: 'numbat', code: 'x-99', summary: 'bilby' }, actor);
    expect(await found('numbat')).toEqual([hit('note.text', c)]);
    expect(await found('bilby')).toEqual([hit('note.summary', c)]);
    await store.updateRecord('note', a.id, { text: 'dingo', code: 'k-7' }, '*', actor);
    expect(await found('wombat')).toEqual([hit('other.name', o)]);
    expect(await found('dingo')).toEqual([hit('note.text', a)]);
    expect(await found('k-7')).toEqual([hit('note.code', a)]);
    await store.deleteRecord('note', c.id);
    expect(await found('numbat')).toEqual([]);
    expect(triggers('r_note').map((t) => t.name)).toHaveLength(3);
  });

  it('follows an object renamed in the same push as its attributes change', async () => {
    await store.pushSource('s', before, {});
    const a = await store.createRecord('note', { title: 'first', body: 'wombat', code: 4711 }, actor);
    const renamed: Declaration = { ...after, objects: { memo: { ...after.objects['note']!, renamedFrom: 'note' }, other: after.objects['other']! } };
    await store.pushSource('s', renamed, { allowDestructive: true });
    expect(await found('wombat')).toEqual([hit('memo.text', a)]);
    expect(await found('4711')).toEqual([hit('memo.code', a)]);
    expect(triggers('r_note')).toEqual([]);
    expect(triggers('r_memo')).toHaveLength(3);
    const b = await store.createRecord('memo', { title: 'second', text: 'numbat' }, actor);
    expect(await found('numbat')).toEqual([hit('memo.text', b)]);
  });

  it('a push failing after it took the triggers down leaves them, and the index, as they were', async () => {
    await store.pushSource('s', before, {});
    const a = await store.createRecord('note', { title: 'first', body: 'wombat', code: 4711, legacy: 'platypus' }, actor);
    const was = triggers('r_note');
    expect(was).toHaveLength(3);
    // Fails inside the push, after the rename (the first step) took note's triggers down:
    // the added attribute's catalog row is refused by a trigger of this test.
    db.exec("CREATE TRIGGER test_refuse AFTER INSERT ON _ss_attributes WHEN new.name = 'summary' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
    const err = await errorOf(() => store.pushSource('s', after, { allowDestructive: true }));
    expect(err.code).toBe('SCHEMA_SYNC_FAILED');
    expect(err.message).toContain('refused by the test');
    db.exec('DROP TRIGGER test_refuse');

    expect(triggers('r_note')).toEqual(was);
    expect(await found('wombat')).toEqual([hit('note.body', a)]);
    expect(await found('platypus')).toEqual([hit('note.legacy', a)]);
    await store.updateRecord('note', a.id, { body: 'dingo' }, '*', actor);
    expect(await found('dingo')).toEqual([hit('note.body', a)]);
    expect(await found('wombat')).toEqual([]);
    // The same push goes through once nothing refuses it.
    await store.pushSource('s', after, { allowDestructive: true });
    expect(await found('dingo')).toEqual([hit('note.text', a)]);
    expect(triggers('r_note')).toHaveLength(3);
    await store.updateRecord('note', a.id, { text: 'numbat' }, '*', actor);
    expect(await found('numbat')).toEqual([hit('note.text', a)]);
  });

  it('a push step that backfills a text attribute writes each record\'s index row once, not once more per backfilled row', async () => {
    await store.pushSource('s', before, {});
    const made: { id: string }[] = [];
    for (let i = 0; i < 40; i++) made.push(await store.createRecord('note', { body: `body${i}`, legacy: `legacy${i}` }, actor));
    // Counts the index rows written from here on (a test trigger; the index has none of its own).
    db.exec('CREATE TABLE test_index_writes (n INTEGER NOT NULL); INSERT INTO test_index_writes VALUES (0)');
    db.exec('CREATE TRIGGER test_count_index_writes AFTER INSERT ON _ss_search BEGIN UPDATE test_index_writes SET n = n + 1; END');
    const written = () => db.prepare('SELECT n FROM test_index_writes').pluck().get() as number;
    // `title` becomes required with a default: the push backfills it on all 40 records.
    const note = before.objects['note']!;
    const res = await store.pushSource('s', { ...before, objects: { ...before.objects, note: { ...note, attributes: { ...note.attributes, title: { type: 'text', required: true, default: 'untitled' } } } } }, {});
    expect(res.plan.steps.map((st) => `${st.action} ${st.target}`)).toEqual(['change_attribute note.title']);
    // The push rebuilds each record's row once; the row triggers (gated during the push) wrote
    // none for the backfill's 40 updates (ungated: 80).
    expect(written()).toBe(40);
    expect((await found('untitled')).length).toBe(40);
    expect(await found('body7')).toEqual([hit('note.body', made[7]!)]);
    expect(await found('legacy7')).toEqual([hit('note.legacy', made[7]!)]);
    // After the push the triggers index writes again.
    await store.updateRecord('note', made[3]!.id, { title: 'kookaburra' }, '*', actor);
    expect(await found('kookaburra')).toEqual([hit('note.title', made[3]!)]);
  });

  it('a text attribute added without a default joins the end of the layout with no index write; one with a default rebuilds the rows once', async () => {
    await store.pushSource('s', before, {});
    const made: { id: string }[] = [];
    for (let i = 0; i < 10; i++) made.push(await store.createRecord('note', { title: `title${i}`, body: `body${i}`, legacy: `legacy${i}` }, actor));
    db.exec('CREATE TABLE test_index_writes (n INTEGER NOT NULL); INSERT INTO test_index_writes VALUES (0)');
    db.exec('CREATE TRIGGER test_count_index_writes AFTER INSERT ON _ss_search BEGIN UPDATE test_index_writes SET n = n + 1; END');
    const written = () => db.prepare('SELECT n FROM test_index_writes').pluck().get() as number;
    const note = before.objects['note']!;
    const withExtra: Declaration = { ...before, objects: { ...before.objects, note: { ...note, attributes: { ...note.attributes, extra: { type: 'text' } } } } };
    await store.pushSource('s', withExtra, {});
    expect(written()).toBe(0);
    // The rows written before still name their attributes right, and later writes index the new one.
    expect(await found('body3')).toEqual([hit('note.body', made[3]!)]);
    expect(await found('legacy4')).toEqual([hit('note.legacy', made[4]!)]);
    await store.updateRecord('note', made[5]!.id, { extra: 'wallaby' }, '*', actor);
    expect(await found('wallaby')).toEqual([hit('note.extra', made[5]!)]);
    expect(await found('title5')).toEqual([hit('note.title', made[5]!)]);
    const n = written();
    const withDefault: Declaration = { ...withExtra, objects: { ...withExtra.objects, note: { ...withExtra.objects['note']!, attributes: { ...withExtra.objects['note']!.attributes, kind: { type: 'text', default: 'kiwi' } } } } };
    await store.pushSource('s', withDefault, {});
    expect(written() - n).toBe(10);
    expect((await found('kiwi')).length).toBe(10);
    expect(await found('wallaby')).toEqual([hit('note.extra', made[5]!)]);
    expect(await found('legacy4')).toEqual([hit('note.legacy', made[4]!)]);
  });
});
