import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from './helpers.js';
import { mulberry32 } from '../support/random.js';
import { clearOfMinuteEnd } from '../support/minute-window.js';
import type { SearchHit } from '../../engine/model/search-hit.js';

// Cross-object search (contract.md §3 "Cross-object search", issue 17): a real server on
// 127.0.0.1 over a real SQLite file.

type Hit = SearchHit;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await s.defineObject('company', [
    { name: 'name', type: 'text' },
    { name: 'site', type: 'url' },
    { name: 'tags', type: 'multiselect', options: ['partner', 'prospect'] },
    { name: 'size', type: 'number' },
  ]);
  await s.defineObject('contact', [
    { name: 'full_name', type: 'text' },
    { name: 'email', type: 'email' },
    { name: 'notes', type: 'text' },
  ]);
});
afterAll(async () => s.close());

async function create(object: string, values: Record<string, unknown>): Promise<string> {
  const r = await s.call('POST', `/records/${object}`, { body: values });
  expect(r.status, r.text).toBe(201);
  return r.body.data.id as string;
}

async function search(query: string, extra: Record<string, unknown> = {}, key?: string): Promise<Hit[]> {
  const r = await s.call('POST', '/search', { body: { query, ...extra }, ...(key ? { key } : {}) });
  expect(r.status, r.text).toBe(200);
  return r.body.data as Hit[];
}

const ids = (hits: Hit[]): string[] => hits.map((h) => h.id);

describe('POST /search and GET /global-search', () => {
  it('ranks best first, matches by prefix, phrases exactly, and folds case and accents', async () => {
    const acme = await create('company', { name: 'Acme Corporation', site: 'https://acme.example' });
    const once = await create('contact', { full_name: 'Zoë Ångström', notes: 'met someone from acme at the fair, long meeting about nothing in particular' });
    const crepe = await create('company', { name: 'Crème Brûlée Café' });

    const hits = await search('acme');
    expect(ids(hits)).toEqual([acme, once]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);

    expect(ids(await search('acm'))).toContain(acme); // prefix
    expect(ids(await search('ACME corp'))).toEqual([acme]); // case, every word must match
    expect(ids(await search('creme brulee'))).toEqual([crepe]); // accents folded
    expect(ids(await search('zoe angstrom'))).toEqual([once]);
    expect(ids(await search('"brûlée café"'))).toEqual([crepe]); // phrase
    expect(await search('"café brûlée"')).toEqual([]); // phrase order matters
    expect(await search('"crèm brûlée"')).toEqual([]); // a phrase is not a prefix

    const g = await s.call('GET', `/global-search?q=${encodeURIComponent('acme')}&limit=1`);
    expect(g.status).toBe(200);
    expect(ids(g.body.data)).toEqual([acme]);
  });

  it('answers plain snippets whose highlights point at the matched words', async () => {
    await create('contact', { full_name: 'Hélène <b>Dupont</b>', notes: 'x '.repeat(200) + 'Dupont once more, dupont' });
    const hits = await search('dupont', { objects: ['contact'] });
    expect(hits.length).toBe(1);
    const h = hits[0]!;
    expect(h.highlights.length).toBeGreaterThan(0);
    for (const [a, b] of h.highlights) expect(h.snippet.slice(a, b).toLowerCase()).toBe('dupont');
    // The text is returned as text: the record's own "<b>" stays, no markup is added.
    expect(h.snippet).toContain('<b>Dupont</b>');
    const accents = (await search('helene', { objects: ['contact'] }))[0]!;
    const [a, b] = accents.highlights[0]!;
    expect(accents.snippet.slice(a, b)).toBe('Hélène');
  });

  it('a text holding the snippet markers or the headline stand-in comes back exactly as stored, unmarked', async () => {
    // \u0001/\u0002 are the highlight markers: such a record is shown plain without them.
    // \u0003 is PostgreSQL's stand-in for `<` in its headline: the text is shown as stored.
    await create('contact', { full_name: 'Odd \u0001Marker\u0002 Zebrafish' });
    await create('contact', { full_name: 'Control\u0003 <i>Quagga</i>' });
    const marker = (await search('zebrafish', { objects: ['contact'] }))[0]!;
    expect(marker.snippet).toBe('Odd Marker Zebrafish');
    expect(marker.highlights).toEqual([]);
    const control = (await search('quagga', { objects: ['contact'] }))[0]!;
    expect(control.snippet).toBe('Control\u0003 <i>Quagga</i>');
    for (const [a, b] of control.highlights) expect(control.snippet.slice(a, b)).toBe('Quagga');
  });

  it('a query\'s words may fall in different attributes of a record; a phrase stays within one; the hit names the attribute matched', async () => {
    const quincy = await create('contact', { full_name: 'Quincy Adams', notes: 'works at Vandelay Industries' });
    expect(ids(await search('quincy vandelay'))).toEqual([quincy]);
    expect(await search('"adams works"')).toEqual([]); // the end of one attribute and the start of the next
    expect((await search('vandelay')).map((h) => [h.id, h.attribute])).toEqual([[quincy, 'notes']]);
    expect((await search('quincy')).map((h) => [h.id, h.attribute])).toEqual([[quincy, 'full_name']]);
    // A name that is the match is the hit's attribute, rather than a long note naming it twice.
    const mira = await create('contact', { full_name: 'Mirabelle', notes: `${'filler '.repeat(30)}mirabelle and mirabelle again` });
    expect((await search('mirabelle')).map((h) => [h.id, h.attribute])).toEqual([[mira, 'full_name']]);
    // A private-use character in values (the SQLite index's separator word) moves no attribute.
    const odd = await create('contact', { full_name: 'Odd \uE000 \uE000 Fellow', notes: 'peculiar \uE000 value' });
    expect((await search('peculiar')).map((h) => [h.id, h.attribute])).toEqual([[odd, 'notes']]);
    expect((await search('fellow')).map((h) => [h.id, h.attribute])).toEqual([[odd, 'full_name']]);
  });

  it('cuts a long text around the match, saying so with …', async () => {
    await create('contact', { full_name: 'Long Note', notes: `${'filler '.repeat(100)}the haystackneedle, found. ${'tail '.repeat(100)}` });
    const [h] = await search('haystackneedle');
    expect(h!.snippet.startsWith('…')).toBe(true);
    expect(h!.snippet.endsWith('…')).toBe(true);
    expect(h!.snippet).toContain('the haystackneedle, found.');
    expect(h!.snippet.length).toBeLessThan(300);
    expect(h!.highlights.map(([a, b]) => h!.snippet.slice(a, b))).toEqual(['haystackneedle']);
  });

  it('indexes select and multiselect options and url/email values', async () => {
    const id = await create('company', { name: 'Optionco', tags: ['partner'] });
    expect((await search('partner')).map((h) => [h.id, h.attribute])).toContainEqual([id, 'tags']);
    const mail = await create('contact', { full_name: 'Mail Person', email: 'quentin@mailbox.example' });
    expect(ids(await search('quentin'))).toContain(mail);
  });

  it('finds a hyphenated word whole and by its prefix, on either backend', async () => {
    const id = await create('contact', { full_name: 'Hyphen Person', notes: 'sent the e-mail about our state-of-the-art co-op' });
    for (const q of ['e-mail', 'e-mai', 'state-of-the', 'co-op', 'co-op e-mail']) expect(ids(await search(q)), q).toContain(id);
  });

  it('finds the words inside emails, URLs and dotted numbers, marked in the text as stored', async () => {
    const person = await create('contact', { full_name: 'Parts Person', email: 'quentin@mailbox-co.example', notes: 'pi is 3.14; see <b>v2.7</b> & more' });
    const site = await create('company', { name: 'Partsco', site: 'https://partsco.example/pricing?plan=team' });
    const hit = (await search('mailbox')).find((h) => h.id === person);
    expect(hit?.attribute).toBe('email');
    expect(hit?.snippet).toBe('quentin@mailbox-co.example');
    expect(hit?.highlights.map(([a, b]) => hit.snippet.slice(a, b))).toEqual(['mailbox']);
    expect(ids(await search('pricing'))).toContain(site);
    expect(ids(await search('plan team'))).toContain(site);
    const pi = (await search('14')).find((h) => h.id === person);
    expect(pi?.snippet).toBe('pi is 3.14; see <b>v2.7</b> & more');
    expect(pi?.highlights.map(([a, b]) => pi.snippet.slice(a, b))).toEqual(['14']);
    expect(ids(await search('"v2 7"'))).toContain(person);
  });

  it('finds a write at once: create, update, delete and the bulk routes', async () => {
    const id = await create('company', { name: 'Brandnewco' });
    expect(ids(await search('brandnewco'))).toEqual([id]);
    const up = await s.call('PUT', `/records/company/${id}`, { body: { name: 'Renamedco' }, headers: { 'if-match': '*' } });
    expect(up.status).toBe(200);
    expect(await search('brandnewco')).toEqual([]);
    expect(ids(await search('renamedco'))).toEqual([id]);
    // An update of a number leaves the text found.
    await s.call('PUT', `/records/company/${id}`, { body: { size: 3 }, headers: { 'if-match': '*' } });
    expect(ids(await search('renamedco'))).toEqual([id]);
    expect((await s.call('DELETE', `/records/company/${id}`)).status).toBe(200);
    expect(await search('renamedco')).toEqual([]);

    const bulk = await s.call('POST', '/records/company/bulk-create', { body: { records: [{ name: 'Bulkone' }, { name: 'Bulktwo' }] } });
    expect(bulk.status).toBe(201);
    const [one, two] = bulk.body.data.records.map((r: { id: string }) => r.id);
    expect(ids(await search('bulkone'))).toEqual([one]);
    const bu = await s.call('POST', '/records/company/bulk-update', { body: { records: [{ id: two, values: { name: 'Bulkthree' } }] } });
    expect(bu.status).toBe(200);
    expect(await search('bulktwo')).toEqual([]);
    expect(ids(await search('bulkthree'))).toEqual([two]);
    expect((await s.call('POST', '/records/company/bulk-delete', { body: { ids: [one, two] } })).status).toBe(200);
    expect(await search('bulkone')).toEqual([]);
    expect(await search('bulkthree')).toEqual([]);
  });

  it('a refused write leaves the index as it was', async () => {
    await s.defineObject('uniq', [{ name: 'code', type: 'text', unique: true }]);
    await create('uniq', { code: 'Solo' });
    const bulk = await s.call('POST', '/records/uniq/bulk-create', { body: { records: [{ code: 'Fresh' }, { code: 'Solo' }] } });
    expect(bulk.status).toBe(400);
    expect(await search('fresh')).toEqual([]);
  });

  it('follows schema changes: rename, type change, drop attribute, drop object', async () => {
    await s.defineObject('gadget', [{ name: 'label', type: 'text' }, { name: 'code', type: 'number' }]);
    const id = await create('gadget', { label: 'Sprocket', code: 42 });
    const attrs = (await s.call('GET', '/schema/objects/gadget')).body.data.attributes as { id: string; name: string }[];
    const label = attrs.find((a) => a.name === 'label')!;
    const code = attrs.find((a) => a.name === 'code')!;

    expect((await s.call('PUT', `/schema/objects/gadget/attributes/${label.id}`, { body: { name: 'title' } })).status).toBe(200);
    expect((await search('sprocket')).map((h) => [h.id, h.attribute])).toEqual([[id, 'title']]);
    // Written after the rename: the triggers name the new column.
    const later = await create('gadget', { title: 'Sprocketeer' });
    expect(ids(await search('sprocket')).sort()).toEqual([id, later].sort());

    // number → text: the converted values become searchable.
    const t = await s.call('PUT', `/schema/objects/gadget/attributes/${code.id}`, { body: { type: 'text' } });
    expect(t.status, t.text).toBe(200);
    expect(ids(await search('42'))).toEqual([id]);

    // An attribute added with a default is indexed with it.
    const added = await s.call('POST', '/schema/objects/gadget/attributes', { body: { name: 'maker', type: 'text', default: 'Widgetworks' } });
    expect(added.status, added.text).toBe(201);
    expect(ids(await search('widgetworks')).sort()).toEqual([id, later].sort());

    expect((await s.call('DELETE', `/schema/objects/gadget/attributes/${label.id}`)).status).toBe(200);
    expect(await search('sprocket')).toEqual([]);
    expect(ids(await search('42'))).toEqual([id]);

    expect((await s.call('DELETE', '/schema/objects/gadget?force=true')).status).toBe(200);
    expect(await search('42')).toEqual([]);
    expect(await search('widgetworks')).toEqual([]);
  });

  it('follows a renamed object in a push', async () => {
    const decl = (name: string, renamedFrom?: string) => ({
      declaration: { objects: { [name]: { ...(renamedFrom ? { renamedFrom } : {}), attributes: { label: { type: 'text' } } } }, views: {} },
    });
    expect((await s.call('PUT', '/schema/sources/inv', { body: decl('widget') })).status).toBe(200);
    const id = await create('widget', { label: 'Doohickey' });
    const r = await s.call('PUT', '/schema/sources/inv', { body: decl('gizmo', 'widget') });
    expect(r.status, r.text).toBe(200);
    expect((await search('doohickey')).map((h) => [h.object, h.id])).toEqual([['gizmo', id]]);
    const after = await create('gizmo', { label: 'Doohickeys' });
    expect(ids(await search('doohickey')).sort()).toEqual([id, after].sort());
  });

  it('follows a push that changes several indexed attributes of one object at once', async () => {
    // One push, several attribute steps of one object: its columns change at once (the
    // folded DDL), and the index follows the object as the push leaves it.
    type Attrs = Record<string, Record<string, unknown>>;
    const push = (attributes: Attrs) => s.call('PUT', '/schema/sources/multi', { body: { declaration: { objects: { note: { attributes } }, views: {} }, allowDestructive: true } });
    const start: Attrs = { title: { type: 'text' }, body: { type: 'text' }, extra: { type: 'text' }, spare: { type: 'text' }, n: { type: 'integer' } };
    expect((await push(start)).status).toBe(200);
    const id = await create('note', { title: 'Quillfeather', body: 'Inkwell', extra: 'Parchment', n: 73519 });
    const steps: [string, Attrs, Record<string, string | null>][] = [
      // rename + drop of a text attribute holding text
      ['rename + drop', { heading: { type: 'text', renamedFrom: 'title' }, body: { type: 'text' }, spare: { type: 'text' }, n: { type: 'integer' } }, { quillfeather: 'heading', inkwell: 'body', parchment: null }],
      // add + drop
      ['add + drop', { heading: { type: 'text' }, body: { type: 'text' }, memo: { type: 'text' }, n: { type: 'integer' } }, { quillfeather: 'heading', inkwell: 'body' }],
      // two renames
      ['two renames', { caption: { type: 'text', renamedFrom: 'heading' }, content: { type: 'text', renamedFrom: 'body' }, memo: { type: 'text' }, n: { type: 'integer' } }, { quillfeather: 'caption', inkwell: 'content' }],
      // a type change to text + a drop
      ['type change + drop', { caption: { type: 'text' }, memo: { type: 'text' }, n: { type: 'text' } }, { quillfeather: 'caption', inkwell: null, '73519': 'n' }],
    ];
    for (const [what, attributes, expected] of steps) {
      const r = await push(attributes);
      expect(r.status, `${what}: ${r.text}`).toBe(200);
      for (const [word, attribute] of Object.entries(expected)) {
        expect((await search(word)).map((h) => [h.id, h.attribute]), `${what}: ${word}`).toEqual(attribute === null ? [] : [[id, attribute]]);
      }
    }
    // Written after the pushes: the triggers name the columns as they now are.
    const later = await create('note', { caption: 'Quillfeathers', memo: 'Blotter' });
    expect(ids(await search('quillfeather')).sort()).toEqual([id, later].sort());
    expect(ids(await search('blotter'))).toEqual([later]);
  });

  it('finds document titles, and follows their rename and delete', async () => {
    await s.defineObject('deal', [{ name: 'title', type: 'text' }, { name: 'contract', type: 'document' }]);
    const deal = await create('deal', { title: 'Big deal' });
    const form = new FormData();
    form.append('file', new Blob(['%PDF-1.4'], { type: 'application/pdf' }), 'c.pdf');
    form.append('title', 'Signed Zanzibar agreement');
    const up = await fetch(`${s.base}/upload/deal/${deal}/contract`, { method: 'POST', headers: { authorization: `Bearer ${s.ownerKey}` }, body: form });
    expect(up.status).toBe(201);
    const doc = ((await up.json()) as { data: { id: string } }).data.id;
    expect((await search('zanzibar')).map((h) => [h.object, h.id, h.attribute])).toEqual([['deal', deal, 'contract']]);
    expect((await s.call('PATCH', `/documents/${doc}`, { body: { title: 'Signed Timbuktu agreement' } })).status).toBe(200);
    expect(await search('zanzibar')).toEqual([]);
    expect(ids(await search('timbuktu'))).toEqual([deal]);
    expect((await s.call('DELETE', `/documents/${doc}`)).status).toBe(200);
    expect(await search('timbuktu')).toEqual([]);
    // A record deleted takes its documents, and their titles leave the index with them.
    const other = await create('deal', { title: 'Small deal' });
    const form2 = new FormData();
    form2.append('file', new Blob(['%PDF-1.4'], { type: 'application/pdf' }), 'd.pdf');
    form2.append('title', 'Kathmandu memo');
    expect((await fetch(`${s.base}/upload/deal/${other}/contract`, { method: 'POST', headers: { authorization: `Bearer ${s.ownerKey}` }, body: form2 })).status).toBe(201);
    expect(ids(await search('kathmandu'))).toEqual([other]);
    expect((await s.call('DELETE', `/records/deal/${other}`)).status).toBe(200);
    expect(await search('kathmandu')).toEqual([]);
  });

  it('returns and counts only hits in objects the key may read (custom role, scopes)', async () => {
    await s.defineObject('secret', [{ name: 'text', type: 'text' }]);
    await s.defineObject('open', [{ name: 'text', type: 'text' }]);
    await create('secret', { text: 'Classified pineapple' });
    const visible = await create('open', { text: 'Public pineapple' });
    const role = await s.call('POST', '/roles', { body: { name: 'reader', permissions: [{ object: 'open', actions: ['read'] }] } });
    expect(role.status, role.text).toBe(201);
    const key = (await s.call('POST', '/keys', { body: { name: 'r', role: 'reader' } })).body.data.secret as string;
    expect(ids(await search('pineapple', {}, key))).toEqual([visible]);
    // Naming the unreadable object finds nothing and does not say it exists.
    expect(await search('pineapple', { objects: ['secret'] }, key)).toEqual([]);
    expect(await search('pineapple', { objects: ['no_such_object'] }, key)).toEqual([]);
    // limit counts readable hits only: limit 1 still finds the readable one.
    expect(ids(await search('classified pineapple', {}, key))).toEqual([]);
    expect(ids(await search('pineapple', { limit: 1 }, key))).toEqual([visible]);
    const g = await s.call('GET', '/global-search?q=pineapple', { key });
    expect(ids(g.body.data)).toEqual([visible]);

    // Scopes: a viewer key without the search scope is refused; with it, it searches.
    const noSearch = await s.keyFor('viewer', ['records:read']);
    expectError(await s.call('POST', '/search', { body: { query: 'pineapple' }, key: noSearch }), { status: 403, code: 'SCHEMA_FORBIDDEN' });
    // search without records:read reads no object: nothing found.
    const onlySearch = await s.keyFor('viewer', ['search']);
    expect(await search('pineapple', {}, onlySearch)).toEqual([]);
    const both = await s.keyFor('viewer', ['search', 'records:read']);
    expect(ids(await search('pineapple', {}, both)).length).toBe(2);
    // The owner may be told an object does not exist.
    expectError(await s.call('POST', '/search', { body: { query: 'x', objects: ['no_such_object'] } }), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
  });

  it('a document title is found only by a key that may read its object, named by the object it sits in', async () => {
    const upload = async (object: string, record: string, title: string): Promise<void> => {
      const form = new FormData();
      form.append('file', new Blob(['%PDF-1.4'], { type: 'application/pdf' }), 'm.pdf');
      form.append('title', title);
      const up = await fetch(`${s.base}/upload/${object}/${record}/file`, { method: 'POST', headers: { authorization: `Bearer ${s.ownerKey}` }, body: form });
      expect(up.status, await up.text()).toBe(201);
    };
    // `vault` has no text attribute: its records have no row of their own, only their documents do.
    await s.defineObject('vault', [{ name: 'file', type: 'document' }]);
    await s.defineObject('desk', [{ name: 'title', type: 'text' }, { name: 'file', type: 'document' }]);
    const hidden = await create('vault', {});
    const shown = await create('desk', { title: 'Zebra desk' });
    await upload('vault', hidden, 'Zebra crossing plan');
    await upload('desk', shown, 'Zebra crossing memo');
    const role = await s.call('POST', '/roles', { body: { name: 'desk_reader', permissions: [{ object: 'desk', actions: ['read'] }] } });
    expect(role.status, role.text).toBe(201);
    const key = (await s.call('POST', '/keys', { body: { name: 'd', role: 'desk_reader' } })).body.data.secret as string;
    expect((await search('crossing', {}, key)).map((h) => [h.object, h.id, h.attribute])).toEqual([['desk', shown, 'file']]);
    expect((await search('crossing')).map((h) => [h.object, h.id]).sort()).toEqual([['desk', shown], ['vault', hidden]].sort());
    expect(await search('crossing', { objects: ['vault'] }, key)).toEqual([]);
    expect((await search('crossing', { objects: ['vault'] })).map((h) => [h.object, h.id])).toEqual([['vault', hidden]]);
  });

  it('concurrent clients: each write is found by the search its writer sends next, and nothing twice', async () => {
    // Invariant: the index rows of a record commit in the record's own transaction, so once a
    // write is answered every later search sees it, whatever else interleaves.
    await s.defineObject('ticket', [{ name: 'subject', type: 'text' }]);
    const words = Array.from({ length: 24 }, (_, i) => `concurrent${String.fromCharCode(97 + i)}token`);
    await Promise.all(
      words.map(async (w, i) => {
        const id = await create('ticket', { subject: `${w} first` });
        expect(ids(await search(w))).toEqual([id]);
        if (i % 2 === 0) {
          const up = await s.call('PUT', `/records/ticket/${id}`, { body: { subject: `${w} second` }, headers: { 'if-match': '*' } });
          expect(up.status).toBe(200);
          expect(await search(`${w} first`)).toEqual([]);
        } else {
          expect((await s.call('DELETE', `/records/ticket/${id}`)).status).toBe(200);
          expect(await search(w)).toEqual([]);
        }
      }),
    );
    expect((await search('concurrent', { limit: 100 })).length).toBe(12);
  });

  it('answers 20 hits when no limit is given, on both routes (contract §3: limit 1..100, default 20)', async () => {
    await s.defineObject('lot', [{ name: 'label', type: 'text' }]);
    const r = await s.call('POST', '/records/lot/bulk-create', { body: { records: Array.from({ length: 25 }, (_, i) => ({ label: `plentiful lot ${i}` })) } });
    expect(r.status, r.text).toBe(201);
    expect(await search('plentiful')).toHaveLength(20);
    const g = await s.call('GET', '/global-search?q=plentiful');
    expect(g.status, g.text).toBe(200);
    expect(g.body.data).toHaveLength(20);
    expect(await search('plentiful', { limit: 100 })).toHaveLength(25);
  });

  it('refuses an empty or blank query with a field error, and a limit out of 1..100', async () => {
    for (const query of ['', '   ', '\t\n']) {
      const r = await s.call('POST', '/search', { body: { query } });
      expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
      expect(r.body.errors[0].path).toEqual(['query']);
    }
    const g = await s.call('GET', '/global-search?q=%20');
    expectError(g, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expect(g.body.errors[0].path).toEqual(['q']);
    expect((await s.call('POST', '/search', { body: { query: 'a', limit: 101 } })).status).toBe(400);
    expect((await s.call('POST', '/search', { body: { query: 'a', limit: 0 } })).status).toBe(400);
    expect((await s.call('POST', '/search', { body: {} })).status).toBe(400);
  });

  it('never answers 500 to FTS syntax in a query (fuzz)', async () => {
    const rand = mulberry32(17);
    const pieces = ['"', '*', '^', ':', 'NEAR', 'NEAR(', 'AND', 'OR', 'NOT', '(', ')', '-', '+', "'", '{', '}', 'acme', 'é', ',', '\\', '""', 'col:', '\u0001', '🙂'];
    for (let i = 0; i < 300; i++) {
      const n = 1 + Math.floor(rand() * 6);
      let q = '';
      for (let j = 0; j < n; j++) q += pieces[Math.floor(rand() * pieces.length)]! + (rand() < 0.5 ? ' ' : '');
      const r = await s.call('POST', '/search', { body: { query: q } });
      if (q.trim() === '') expect(r.status).toBe(400);
      else expect(r.status, `query ${JSON.stringify(q)}: ${r.text}`).toBe(200);
    }
  });
});

describe('rate limit', () => {
  it('POST /search and GET /global-search share the global-search bucket (30 per minute)', async () => {
    const r = await startTestServer({ rateLimit: true });
    try {
      await clearOfMinuteEnd();
      for (let i = 0; i < 15; i++) {
        expect((await r.call('POST', '/search', { body: { query: 'x' } })).status).toBe(200);
        expect((await r.call('GET', '/global-search?q=x')).status).toBe(200);
      }
      const over = await r.call('GET', '/global-search?q=x');
      expect(over.status).toBe(429);
      expect(over.body.message).toBe('ThrottlerException: Too Many Requests');
      // Other routes are in the default bucket, still open.
      expect((await r.call('GET', '/schema/objects')).status).toBe(200);
    } finally {
      await r.close();
    }
  });
});
