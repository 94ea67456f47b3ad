import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttributeSpec } from '../../engine/model/attribute.js';
import type { StoredObject } from '../../engine/model/stored.js';
import { postgresDdl } from '../../engine/store/postgres/ddl.js';
import { PostgresDriver } from '../../engine/store/postgres/driver.js';
import { foldsAccents, postgresFulltext as fts } from '../../engine/store/postgres/fulltext.js';
import { tableIdent } from '../../engine/store/sql/idents.js';
import { setupDatabase } from '../../engine/store/postgres/setup.js';
import { wordsSql, wordsText } from '../../engine/store/postgres/fulltext-words.js';
import { createTestDatabase } from '../support/postgres-db.js';

const attr = (name: string, spec: Partial<AttributeSpec> = {}): StoredObject['attributes'][number] => ({
  name,
  type: 'text',
  ...spec,
  id: `a-${name}`,
  protected: false,
  system: false,
  owner: { kind: 'runtime' },
  createdAt: 'c',
  updatedAt: 'u',
});
const object = (name: string, attributes: StoredObject['attributes']): StoredObject => ({
  id: `o-${name}`,
  name,
  owner: { kind: 'runtime' },
  protected: false,
  attributes,
  createdAt: 'c',
  updatedAt: 'u',
});

describe('PostgreSQL full-text search', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let d: PostgresDriver;
  // Attributes named like the index's SQL aliases (e, n, t, x, v, r) must not confuse it.
  let company = object('company', [attr('name'), attr('tags', { type: 'multiselect', options: ['saas', 'b2b'] }), attr('size', { type: 'integer' }), ...['e', 'n', 't', 'x', 'v', 'r'].map((n) => attr(n))]);
  const note = object('note', [attr('body')]);
  const insert = (o: string, id: string, cols: Record<string, string | number | null>): Promise<unknown> => {
    const names = Object.keys(cols);
    return d.run(
      `INSERT INTO ${tableIdent(o)} (id, version, created_at, updated_at${names.map((n) => `, "${n}"`).join('')}) VALUES (?, 1, 'c', 'u'${names.map(() => ', ?').join('')})`,
      [id, ...Object.values(cols)],
    );
  };
  const search = (query: string, objects: string[] | null = null, limit = 20) => fts.query(d, { query, objects, limit });

  beforeAll(async () => {
    db = await createTestDatabase('fts');
    d = new PostgresDriver({ url: db.url, max: 3 });
    await d.transaction(async (tx) => {
      await setupDatabase(tx);
      for (const o of [company, note]) await postgresDdl.createRecordTable(tx, o.name, o.attributes);
      await fts.ensure(tx, [company, note]);
    });
    await insert('company', 'c1', { name: 'Acme Corporation', tags: '["saas","b2b"]', size: 10 });
    await insert('company', 'c2', { name: 'Société Générale', tags: null, size: 5 });
    await insert('note', 'n1', { body: 'Met the acme team; acme acme acme — renewal due. <b>bold</b> & "quotes"' });
  });
  afterAll(async () => {
    await d.close();
    await db.drop();
  });

  it('finds words by prefix, case and accents ignored, best first with highlights', async () => {
    expect(await foldsAccents(d)).toBe(true);
    const hits = await search('ACM');
    expect(hits.map((h) => [h.object, h.id]).sort()).toEqual([
      ['company', 'c1'],
      ['note', 'n1'],
    ]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    const c1 = hits.find((h) => h.id === 'c1')!;
    expect(c1.attribute).toBe('name');
    expect(c1.snippet).toBe('Acme Corporation');
    expect(c1.highlights.map(([s, e]) => c1.snippet.slice(s, e))).toEqual(['Acme']);
    expect((await search('societe generale')).map((h) => h.id)).toEqual(['c2']);
    expect((await search('SOCIÉ')).map((h) => h.id)).toEqual(['c2']);
  });

  it('matches quoted phrases exactly, treats query syntax as text, and ANDs the terms', async () => {
    expect((await search('"acme corporation"')).map((h) => h.id)).toEqual(['c1']);
    expect(await search('"corporation acme"')).toEqual([]);
    expect(await search('acme zzz')).toEqual([]);
    for (const q of ["a:* & !b | (c", "'", '\\', '!!!', '""', 'renewal:*', "o'brien"]) await expect(search(q)).resolves.toBeInstanceOf(Array);
    // The text comes back as stored: markup-like text kept, nothing added, cut with … only where cut.
    const bold = await search('bold');
    expect(bold.map((h) => h.id)).toEqual(['n1']);
    expect(bold[0]!.snippet).toBe('Met the acme team; acme acme acme — renewal due. <b>bold</b> & "quotes"');
    expect(bold[0]!.highlights.map(([a, b]) => bold[0]!.snippet.slice(a, b))).toEqual(['bold']);
    // Multiselect options are indexed (joined), as in SQLite.
    expect((await search('b2b')).map((h) => [h.id, h.attribute])).toEqual([['c1', 'tags']]);
  });

  it('keeps the index exact in the write transaction: update, delete, rollback', async () => {
    await d.run(`UPDATE ${tableIdent('company')} SET name = 'Globex' WHERE id = 'c1'`);
    expect((await search('acme', ['company'])).map((h) => h.id)).toEqual([]);
    expect((await search('glob')).map((h) => h.id)).toEqual(['c1']);
    await expect(
      d.transaction(async (tx) => {
        await tx.run(`DELETE FROM ${tableIdent('company')} WHERE id = 'c1'`);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await search('glob')).map((h) => h.id)).toEqual(['c1']);
    // A change of a column that is not indexed leaves the entries alone.
    await d.run(`UPDATE ${tableIdent('company')} SET size = 11 WHERE id = 'c1'`);
    expect((await search('glob')).map((h) => h.id)).toEqual(['c1']);
    await d.run(`DELETE FROM ${tableIdent('company')} WHERE id = 'c1'`);
    expect(await search('glob')).toEqual([]);
  });

  it('follows schema changes: rename an attribute and an object, add and drop attributes, documents', async () => {
    await insert('company', 'c3', { name: 'Initech', tags: '["saas"]', e: 'echo', n: 'november' });
    await d.transaction(async (tx) => {
      await fts.beforeSchemaChange(tx, 'company');
      await postgresDdl.renameColumn(tx, 'company', 'name', 'title');
      company = object('company', [attr('title'), ...company.attributes.filter((a) => a.name !== 'name')]);
      await fts.afterAttributeChange(tx, company, 'name', 'title');
    });
    expect((await search('initech')).map((h) => [h.id, h.attribute])).toEqual([['c3', 'title']]);
    expect((await search('novem')).map((h) => [h.id, h.attribute])).toEqual([['c3', 'n']]);
    // Inserts are indexed by a function of the object's own (fulltext-rows.ts functionsSql):
    // a rename or a drop leaves none behind.
    const insertFunctions = async () => (await d.all<{ f: string }>("SELECT proname AS f FROM pg_proc WHERE proname LIKE '\\_ss\\_search\\_ins\\_%' ORDER BY 1")).map((r) => r.f);
    const before = await insertFunctions();
    await d.transaction(async (tx) => {
      await postgresDdl.renameRecordTable(tx, 'company', 'firm');
      company = object('firm', company.attributes);
      await fts.afterObjectRename(tx, 'company', company);
    });
    expect((await search('initech')).map((h) => h.object)).toEqual(['firm']);
    expect(await insertFunctions()).toHaveLength(before.length);
    expect(await insertFunctions()).not.toEqual(before);
    await insert('firm', 'c4', { title: 'Initrode' });
    expect((await search('initr')).map((h) => [h.object, h.id])).toEqual([['firm', 'c4']]);
    // Drop the indexed column: the DROP is not blocked by the trigger, entries go.
    await d.transaction(async (tx) => {
      await fts.beforeSchemaChange(tx, 'firm');
      await postgresDdl.dropColumn(tx, 'firm', 'a-title', 'title');
      company = object('firm', company.attributes.filter((a) => a.name !== 'title'));
      await fts.afterAttributeChange(tx, company, 'title', undefined);
    });
    expect(await search('initech')).toEqual([]);
    expect((await search('saas')).map((h) => h.id)).toEqual(['c3']);
    // Document titles are indexed under their record and attribute.
    await d.run("INSERT INTO _ss_files (id, name, mime_type, size, sha256, created_at) VALUES ('f1', 'x.pdf', 'application/pdf', 1, 'h', 'c')");
    await d.run("INSERT INTO _ss_documents (id, title, file_id, object, record_id, attribute, created_at) VALUES ('d1', 'Quarterly Report', 'f1', 'firm', 'c3', 'contract', 'c')");
    expect((await search('quarter')).map((h) => [h.object, h.id, h.attribute])).toEqual([['firm', 'c3', 'contract']]);
    await d.run("DELETE FROM _ss_documents WHERE id = 'd1'");
    expect(await search('quarter')).toEqual([]);
    await d.transaction((tx) => fts.dropObject(tx, 'firm'));
    expect(await search('saas')).toEqual([]);
    expect(await insertFunctions()).toHaveLength(before.length - 1);
  });

  it('adds a text attribute with no text in it without writing a row; one with text (a backfilled default) rebuilds', async () => {
    let deal = object('deal', [attr('title')]);
    await d.transaction(async (tx) => {
      await postgresDdl.createRecordTable(tx, 'deal', deal.attributes);
      await fts.afterAttributeChange(tx, deal, undefined, undefined);
    });
    for (let i = 0; i < 5; i++) await insert('deal', `k${i}`, { title: `Deal ${i}` });
    // xmin is the transaction that wrote a row version: unchanged means not written again.
    const versions = async () => (await d.all<{ record_id: string; v: string }>("SELECT record_id, xmin::text AS v FROM _ss_search WHERE object = 'deal' ORDER BY record_id"));
    const layout = async () => (await d.get<{ attributes: string }>("SELECT attributes FROM _ss_search_layout WHERE object = 'deal'"))?.attributes;
    const before = await versions();
    expect(before).toHaveLength(5);
    const add = async (name: string, fill?: string) =>
      d.transaction(async (tx) => {
        await fts.beforeSchemaChange(tx, 'deal');
        const spec = attr(name);
        await postgresDdl.addColumn(tx, 'deal', spec);
        if (fill !== undefined) await tx.run(`UPDATE ${tableIdent('deal')} SET "${name}" = ?`, [fill]);
        deal = object('deal', [...deal.attributes, spec]);
        await fts.afterAttributeChange(tx, deal, undefined, name);
      });
    await add('notes');
    expect(await versions()).toEqual(before);
    expect(await layout()).toBe('["title","notes"]');
    // The appended attribute is indexed by the triggers made for the new layout.
    await d.run(`UPDATE ${tableIdent('deal')} SET notes = 'mentions vandelay' WHERE id = 'k1'`);
    expect((await search('vandelay')).map((h) => [h.id, h.attribute, h.snippet])).toEqual([['k1', 'notes', 'mentions vandelay']]);
    // Words of one query may fall in different attributes of the record.
    expect((await search('deal vandelay')).map((h) => h.id)).toEqual(['k1']);
    // A phrase does not run from one attribute into the next.
    expect(await search('"1 mentions"')).toEqual([]);
    // A default backfilled into the new column: every row holds text in it, so the rows are made again.
    await add('stage', 'prospect');
    const after = await versions();
    expect(after).toHaveLength(5);
    expect(after.every((r, i) => r.v !== before[i]!.v)).toBe(true);
    expect(await layout()).toBe('["title","notes","stage"]');
    expect((await search('prospect')).map((h) => h.attribute)).toEqual(['stage', 'stage', 'stage', 'stage', 'stage']);
    await d.transaction((tx) => fts.dropObject(tx, 'deal'));
    expect(await layout()).toBeUndefined();
  });

  it('brings an index of the per-attribute layout forward on open: rows rebuilt, its row function gone', async () => {
    await d.transaction(async (tx) => {
      // What layout 2 left that layout 3 has not: the generic row function, called by a record table's trigger.
      await tx.exec("CREATE OR REPLACE FUNCTION _ss_search_row() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN RETURN NULL; END $fn$");
      await tx.exec(`DROP TRIGGER IF EXISTS _ss_search_upd ON ${tableIdent('note')}; CREATE TRIGGER _ss_search_upd AFTER UPDATE OF body ON ${tableIdent('note')} FOR EACH ROW EXECUTE FUNCTION _ss_search_row('note', 'body')`);
      await tx.run("UPDATE _ss_meta SET value = '2' WHERE key = 'search_layout'");
    });
    expect(await d.transaction((tx) => fts.ensure(tx, [note]))).toBe(true);
    expect(await d.get("SELECT 1 AS x FROM pg_proc WHERE proname = '_ss_search_row'")).toBeUndefined();
    expect((await search('renewal')).map((h) => [h.id, h.attribute])).toEqual([['n1', 'body']]);
    await d.run(`UPDATE ${tableIdent('note')} SET body = 'rewritten' WHERE id = 'n1'`);
    expect((await search('rewritten')).map((h) => h.id)).toEqual(['n1']);
    expect(await search('renewal')).toEqual([]);
    expect(await d.transaction((tx) => fts.ensure(tx, [note]))).toBe(false);
  });

  it("a text finds itself, whole and with its last word cut short: hyphens, apostrophes, accents, emails, numbers", async () => {
    const texts = ['e-mail', 'state-of-the-art design', "O'Brien's café", 'Crème-brûlée 2.0', 'x@example.com', 'v1.2.3-beta', 'foo--bar', 'a.b.c', 'naïve co-op', 'ÉCOLE', 'R&D', '3.14 π', 'semi-colon; here', 'x\ue001y'];
    for (const text of texts) {
      const q = await d.get<{ whole: boolean; prefix: boolean }>(
        `SELECT (to_tsvector('schemasync_search', ${wordsSql('?::text')}) @@ _ss_prefix_tsquery(?::text))::int AS whole,
                (to_tsvector('schemasync_search', ${wordsSql('?::text')}) @@ _ss_prefix_tsquery(?::text))::int AS prefix`,
        // As typed: the last word cut short (a prefix), the words before it whole.
        [text, text, text, /[\p{L}\p{N}]{2}$/u.test(text) ? text.slice(0, -1) : text],
      );
      expect(q, text).toEqual({ whole: 1, prefix: 1 });
    }
    await insert('note', 'hy', { body: 'Send the e-mail about the state-of-the-art co-op' });
    for (const query of ['e-mail', 'e-mai', 'state-of-the', 'co-op']) expect((await search(query, ['note'])).map((h) => h.id), query).toContain('hy');
  });

  it('reads the same characters as spaces in SQL (the index, the queries) and in JS (the headline check)', async () => {
    const text = `${Array.from({ length: 126 }, (_, i) => String.fromCharCode(i + 1)).join('')}é’—«»\u00a0€£\ue000\u{1f389}東`;
    const row = await d.get<{ w: string }>(`SELECT ${wordsSql('?::text')} AS w`, [text]);
    expect(row?.w).toBe(wordsText(text));
    expect([...wordsText(text)].filter((c, i) => c !== [...text][i]).length).toBe(32);
  });

  it('an index of the current layout whose prefix function is older gets this one on open, without a rebuild', async () => {
    await insert('note', 'pf', { body: 'Quarterly prefixcheck' });
    await d.exec("CREATE OR REPLACE FUNCTION _ss_prefix_tsquery(q text) RETURNS tsquery LANGUAGE sql STABLE AS $fn$ SELECT to_tsquery('simple', 'nothing') $fn$");
    expect(await search('prefixch', ['note'])).toEqual([]);
    expect(await d.transaction((tx) => fts.ensure(tx, [company, note]))).toBe(false);
    expect((await search('prefixch', ['note'])).map((h) => h.id)).toEqual(['pf']);
  });

  it('cuts a long text around the match, saying so with …', async () => {
    await insert('note', 'long', { body: `${'filler '.repeat(100)}the needle, found. ${'tail '.repeat(100)}` });
    const [h] = await search('needle');
    expect(h!.snippet.startsWith('…')).toBe(true);
    expect(h!.snippet.endsWith('…')).toBe(true);
    expect(h!.snippet).toContain('the needle, found.');
    expect(h!.highlights.map(([a, b]) => h!.snippet.slice(a, b))).toEqual(['needle']);
  });

  it('answers only the named objects, and the limit counts records', async () => {
    for (let i = 0; i < 30; i++) await insert('note', `m${i}`, { body: `widget ${i} widget` });
    expect(await search('widget', [])).toEqual([]);
    expect((await search('widget', ['firm'])).length).toBe(0);
    const page = await search('widget', ['note'], 7);
    expect(page).toHaveLength(7);
    expect(new Set(page.map((h) => h.id)).size).toBe(7);
  });
});
