import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';
import { cli, countOf, valuesOf } from './records-cli-helpers.js';

// `schemasync records …` end to end (issue 17): the built bin against a real server over a
// real SQLite file. `npm run build` first.
const cwd = mkdtempSync(join(tmpdir(), 'schemasync-records-cli-'));
let s: TestServer;

/** Every attribute type, with the awkward values each can hold. */
const ATTRS = [
  { name: 'title', type: 'text', required: true, unique: true },
  { name: 'amount', type: 'number' },
  { name: 'qty', type: 'integer' },
  { name: 'won', type: 'boolean' },
  { name: 'due', type: 'date' },
  { name: 'at', type: 'datetime' },
  { name: 'email', type: 'email' },
  { name: 'site', type: 'url' },
  { name: 'stage', type: 'select', options: ['lead', 'won', 'a,b'] },
  { name: 'tags', type: 'multiselect', options: ['x', 'y', 'z;w', 'q"uote'] },
  { name: 'meta', type: 'json' },
  { name: 'company', type: 'relation', target: 'company' },
  { name: 'partners', type: 'relation', target: 'company', multiple: true },
  { name: 'contract', type: 'document' },
  { name: 'note', type: 'text' },
];

const run = (args: string[], stdin?: string) => cli(s, args, { cwd, ...(stdin !== undefined ? { stdin } : {}) });

beforeAll(async () => {
  s = await startTestServer();
  await s.defineObject('company', [{ name: 'name', type: 'text', required: true, unique: true }]);
  for (const name of ['src', 'dst_csv', 'dst_ndjson', 'plain', 'target']) await s.defineObject(name, ATTRS);
});
afterAll(async () => {
  await s.close();
  rmSync(cwd, { recursive: true, force: true });
});

describe('records list|get|create|update|delete', () => {
  it('create types --set values by the attribute; get, update (if-match, --read-first), delete', async () => {
    const acme = await run(['records', 'create', 'company', '--set', 'name=Acme', '--json']);
    expect(acme.code, acme.stderr).toBe(0);
    const company = JSON.parse(acme.stdout) as { id: string };
    const made = await run([
      'records', 'create', 'plain', '--json',
      '--set', 'title=Renewal', '--set', 'amount=12.5', '--set', 'qty=-3', '--set', 'won=yes', '--set', 'due=2024-05-01',
      '--set', 'at=2024-05-01T11:30:00+02:00', '--set', 'tags=["x","z;w"]', '--set', 'meta={"k":[1,2]}', '--set', `company=${company.id}`,
      '--set', `partners=${company.id}`, '--set', 'note=',
    ]);
    expect(made.code, made.stderr).toBe(0);
    const rec = JSON.parse(made.stdout) as { id: string; version: number; values: Record<string, unknown> };
    expect(rec.values).toMatchObject({
      title: 'Renewal', amount: 12.5, qty: -3, won: true, due: '2024-05-01', at: '2024-05-01T09:30:00.000Z',
      tags: ['x', 'z;w'], meta: { k: [1, 2] }, company: company.id, partners: [company.id], note: null,
    });

    const bad = await run(['records', 'create', 'plain', '--set', 'title=x', '--set', 'amount=12,5', '--set', 'won=maybe', '--set', 'nope=1']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--set amount: amount must be a number (got "12,5")');
    expect(bad.stderr).toContain('--set won: won must be true or false (got "maybe")');
    expect(bad.stderr).toContain('--set nope: object plain has no attribute "nope"');
    expect(await countOf(s, 'plain')).toBe(1);
    // A hand-written list: items separated by `;` (export writes JSON lists).
    const split = await run(['records', 'create', 'plain', '--set', 'title=split', '--set', 'tags= x ;y', '--json']);
    expect(JSON.parse(split.stdout)).toMatchObject({ values: { tags: ['x', 'y'] } });

    const got = await run(['records', 'get', 'plain', rec.id]);
    expect(got.code).toBe(0);
    expect(got.stdout).toMatch(/^plain [0-9a-f-]{36}$/m);
    expect(got.stdout).toMatch(/^\s+amount\s+12\.5$/m);

    const noVersion = await run(['records', 'update', 'plain', rec.id, '--set', 'qty=4']);
    expect(noVersion.code).toBe(1);
    expect(noVersion.stderr).toContain('update needs the version it changes');
    const updated = await run(['records', 'update', 'plain', rec.id, '--set', 'qty=4', '--if-match', String(rec.version), '--json']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ version: rec.version + 1, values: { qty: 4 } });
    const stale = await run(['records', 'update', 'plain', rec.id, '--data', '{"qty":5}', '--if-match', String(rec.version)]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^Error: 409 SCHEMA_CONFLICT: .*\n  hint: the record changed since that version: read it again \(schemasync records get plain [0-9a-f-]+\) and retry, or use --read-first$/m);
    const readFirst = await run(['records', 'update', 'plain', rec.id, '--data', '{"qty":6}', '--read-first', '--json']);
    expect(readFirst.code, readFirst.stderr).toBe(0);
    expect(JSON.parse(readFirst.stdout)).toMatchObject({ version: rec.version + 2, values: { qty: 6 } });

    const deleted = await run(['records', 'delete', 'plain', rec.id]);
    expect(deleted.stdout).toBe(`deleted plain ${rec.id}\n`);
    const gone = await run(['records', 'get', 'plain', rec.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^Error: 404 SCHEMA_RECORD_NOT_FOUND: /m);
  });

  it('a refused write lists each field error under its line', async () => {
    const bad = await run(['records', 'create', 'plain', '--data', '{"amount":"lots","qty":1.5}']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('Error: 400 SCHEMA_VALIDATION_FAILED: 3 values are invalid\n  title: title is required\n  amount: amount must be a number\n  qty: qty must be an integer\n');
  });

  it('list: a table, NDJSON with --json, --filter, --sort (repeatable), --limit, --all across pages', async () => {
    await s.defineObject('many', [{ name: 'n', type: 'integer' }, { name: 'kind', type: 'select', options: ['odd', 'even'] }]);
    await s.store.bulkCreate('many', Array.from({ length: 1203 }, (_v, i) => ({ n: i, kind: i % 2 ? 'odd' : 'even' })), { keyId: 'test', role: 'owner', scopes: null } as never);

    const table = await run(['records', 'list', 'many', '--sort', 'n:desc', '--limit', '3']);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+n\s+kind$/);
    expect(lines.slice(1, 4).map((l) => l.split(/\s+/)[1])).toEqual(['1202', '1201', '1200']);
    // Whole ids, to copy into get, update or delete.
    const firstId = lines[1]!.split(/\s+/)[0]!;
    expect(firstId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect((await run(['records', 'get', 'many', firstId, '--json'])).code).toBe(0);
    expect(lines[4]).toBe('3 records');
    expect(table.stderr).toMatch(/more records: --all for every page, or --cursor \S+ for the next/);

    const all = await run(['records', 'list', 'many', '--all', '--json', '--filter', '{"kind":"odd"}', '--sort', 'kind', '--sort', 'n:desc']);
    expect(all.code, all.stderr).toBe(0);
    const recs = all.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { values: { n: number } });
    expect(recs).toHaveLength(601);
    expect(recs[0]!.values.n).toBe(1201);
    expect(recs.at(-1)!.values.n).toBe(1);
    expect(all.stderr).toBe('');

    const comma = await run(['records', 'list', 'many', '--json', '--sort', 'kind:asc,n:asc', '--limit', '2']);
    expect(comma.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { values: { n: number } }).values.n)).toEqual([0, 2]);

    const badFilter = await run(['records', 'list', 'many', '--filter', '{kind:odd}']);
    expect(badFilter.code).toBe(1);
    expect(badFilter.stderr).toMatch(/^Error: --filter is not JSON/m);
    const badSort = await run(['records', 'list', 'many', '--sort', 'n:down']);
    expect(badSort.stderr).toContain("--sort takes attr, attr:asc or attr:desc, got 'n:down'");
    const unknown = await run(['records', 'list', 'many', '--filter', '{"nn":1}']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^Error: 40\d SCHEMA_/m);
  });
});

describe('records export → import round-trips every type', () => {
  it('CSV and NDJSON: documents and relations by id, multiselect, json, dates, empty vs no value', async () => {
    const c1 = await s.store.createRecord('company', { name: 'C1' }, { keyId: 'test', role: 'owner', scopes: null } as never);
    const c2 = await s.store.createRecord('company', { name: 'C2' }, { keyId: 'test', role: 'owner', scopes: null } as never);
    const rows: Record<string, unknown>[] = [
      {
        title: 'full', amount: 1234.5678, qty: -7, won: false, due: '0001-01-01', at: '2024-05-01T09:30:00.000Z', email: 'a.b@example.com',
        site: 'https://example.com/a?b=c,d', stage: 'a,b', tags: ['z;w', 'q"uote'], meta: { a: [1, 'two', null, { b: true }] },
        company: c1.id, partners: [c1.id, c2.id], note: 'line1\nline2, "quoted"\ttab ééé 😀',
      },
      { title: 'empty', note: '', meta: 'hello', tags: [], partners: [] },
      { title: 'numbers', amount: 1e-7, qty: 0, won: true, meta: 42, stage: 'lead', due: '9999-12-31' },
      { title: '[bracket', meta: [], note: '[not a list]', tags: ['x'] },
      { title: '=1+1', meta: null, note: ' spaced ', amount: -0.5 },
    ];
    for (const r of rows) expect((await s.call('POST', '/records/src', { body: r })).status).toBe(201);
    const full = (await s.call('POST', '/records/src/search', { body: { filter: { title: 'full' } } })).body.data[0] as { id: string };
    const form = new FormData();
    form.append('file', new Blob(['%PDF-1.4 test'], { type: 'application/pdf' }), 'c.pdf');
    const up = await fetch(`${s.base}/upload/src/${full.id}/contract`, { method: 'POST', headers: { authorization: `Bearer ${s.ownerKey}` }, body: form });
    expect(up.status).toBe(201);
    const original = await valuesOf(s, 'src', 'title');
    expect(original.find((v) => v['title'] === 'full')!['contract']).toEqual(expect.any(String));

    // Both exports first: importing a document id moves the document to the new record.
    for (const format of ['csv', 'ndjson']) {
      const file = `export.${format}`;
      const exported = await run(['records', 'export', 'src', '--out', file]);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout).toContain(`exported 5 records of src to ${file} (${format})`);
    }
    for (const [format, dst] of [['csv', 'dst_csv'], ['ndjson', 'dst_ndjson']] as const) {
      const file = `export.${format}`;
      const imported = await run(['records', 'import', dst, file]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toMatch(/^imported 5 of 5 rows of export\.\w+ into dst_\w+ in .*; 0 refused\.$/m);
      expect(imported.stderr).toContain('note: id: system attributes');
      expect(await valuesOf(s, dst, 'title')).toEqual(original);
    }
    // The CSV keeps "no value" and the empty string apart, and lists and json as JSON text.
    const csv = readFileSync(join(cwd, 'export.csv'), 'utf8');
    expect(csv.split('\n')[0]).toBe(`id,${ATTRS.map((a) => a.name).join(',')}`);
    expect(csv).toMatch(/^[0-9a-f-]{36},empty,,,,,,,,,\[\],"""hello""",,\[\],,""$/m);
  });

  it('export streams to stdout as NDJSON by default and honours --filter; CSV with --format', async () => {
    const out = await run(['records', 'export', 'src', '--filter', '{"title":{"in":["numbers","empty"]}}']);
    expect(out.code, out.stderr).toBe(0);
    const lines = out.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l['title']).sort()).toEqual(['empty', 'numbers']);
    expect(Object.keys(lines[0]!)[0]).toBe('id');
    const csv = await run(['records', 'export', 'src', '--format', 'csv', '--filter', '{"title":"numbers"}']);
    expect(csv.stdout.split('\n')[1]).toMatch(/^[0-9a-f-]{36},numbers,1e-7,0,true,9999-12-31,,,,lead,,42,,,,$/);
  });

  it('export over several pages (read one ahead) writes every record once, in id order, in both formats', async () => {
    await s.defineObject('paged', [{ name: 'title', type: 'text' }, { name: 'n', type: 'integer' }]);
    const made = await s.call('POST', '/records/paged/bulk-create', { body: { records: Array.from({ length: 1234 }, (_, i) => ({ title: `row ${i}`, n: i })) } });
    expect(made.status).toBe(201);
    const ids = (made.body.data.records as { id: string }[]).map((r) => r.id).sort();
    const nd = await run(['records', 'export', 'paged']);
    expect(nd.code, nd.stderr).toBe(0);
    const lines = nd.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { id: string; n: number; title: string });
    expect(lines.map((l) => l.id)).toEqual(ids);
    expect(new Set(lines.map((l) => l.n)).size).toBe(1234);
    const csv = await run(['records', 'export', 'paged', '--format', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const rows = csv.stdout.trimEnd().split('\n');
    expect(rows[0]).toBe('id,title,n');
    expect(rows.slice(1).map((r) => r.split(',')[0])).toEqual(ids);
  });
});

describe('records import: bad input', () => {
  it('an unknown column is refused before any write, with the near miss', async () => {
    writeFileSync(join(cwd, 'unknown.csv'), 'title,amout\nA,1\n');
    const r = await run(['records', 'import', 'target', 'unknown.csv']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error: the CSV header (line 1) does not match object target: column 2: object target has no attribute "amout" (did you mean "amount"?). Nothing was imported.');
    expect(await countOf(s, 'target')).toBe(0);
  });

  it('a cell that fails its type names line and column; a wrong cell count names the line; --on-error skip imports the rest', async () => {
    writeFileSync(join(cwd, 'cells.csv'), 'title,amount,won\nA,1,true\n"B\nsecond line",abc,maybe\nC,3\nD,4,false\n');
    const r = await run(['records', 'import', 'target', 'cells.csv', '--on-error', 'skip', '--errors', 'rejected.ndjson']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('line 3: column 2: amount must be a number (got "abc"); column 3: won must be true or false (got "maybe")');
    expect(r.stderr).toContain('line 5: has 2 cells; the header has 3');
    expect(r.stdout).toMatch(/^imported 2 of 4 rows of cells\.csv into target .*; 2 refused\.$/m);
    const rejected = readFileSync(join(cwd, 'rejected.ndjson'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { line: number; errors: { column?: number }[] });
    expect(rejected.map((x) => x.line)).toEqual([3, 5]);
    expect(rejected[0]!.errors.map((e) => e.column)).toEqual([2, 3]);
    expect((await valuesOf(s, 'target', 'title')).map((v) => v['title'])).toEqual(['A', 'D']);
  });

  it('an unbalanced quote is a malformed CSV naming its line; NDJSON lines that are not objects are named', async () => {
    writeFileSync(join(cwd, 'quote.csv'), 'title,amount\nQ1,1\nQ2,"2\nQ3,3\n');
    const r = await run(['records', 'import', 'target', 'quote.csv']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: malformed CSV at line 4: a quoted cell is not closed$/m);
    const nd = await run(['records', 'import', 'target', '-', '--format', 'ndjson', '--dry-run'], '{"title":"ok"}\n[1]\n{"title":\n\n{"title":"x","amount":"1"}\n');
    expect(nd.code).toBe(1);
    expect(nd.stderr).toContain('line 2: must be a JSON object of attribute → value');
    expect(nd.stderr).toMatch(/line 3: not a JSON object: /);
    expect(nd.stderr).toContain('line 5: amount must be a number');
    expect(nd.stdout).toContain('dry run: 1 of 4 rows of stdin would be imported into target; 3 refused. Nothing was written.');
    const stdinNoFormat = await run(['records', 'import', 'target', '-'], '');
    expect(stdinNoFormat.stderr).toContain('--format ndjson or --format csv');
  });

  it('a CSV that breaks after batches were sent: they settle, and the summary names the lines in the store', async () => {
    writeFileSync(join(cwd, 'late.csv'), 'title,amount\nL1,1\nL2,2\nL3,"3\nL4,4\n');
    const r = await run(['records', 'import', 'target', 'late.csv', '--batch', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: malformed CSV at line 5: a quoted cell is not closed$/m);
    expect(r.stderr).toContain('the import stopped: lines 2–3 are imported; anything after line 3 is not. Fix the file in place (add or remove no line) and rerun the same command');
    const titles = (await valuesOf(s, 'target', 'title')).map((v) => v['title']);
    expect(titles.filter((t) => String(t).startsWith('L'))).toEqual(['L1', 'L2']);
  });

  it('--dry-run checks every row (also unique values repeated in the file) and writes nothing', async () => {
    const before = await countOf(s, 'target');
    writeFileSync(join(cwd, 'dry.ndjson'), '{"title":"d1"}\n{"title":"d2","qty":1.5}\n{"title":"d1"}\n{"amount":1}\n');
    const r = await run(['records', 'import', 'target', 'dry.ndjson', '--dry-run', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ dryRun: true, rows: 4, imported: 0, refused: 3 });
    expect(r.stderr).toContain('line 2: qty must be an integer');
    expect(r.stderr).toContain('line 3: title must be unique: an earlier row of the file has the same value');
    expect(r.stderr).toContain('line 4: title is required');
    expect(await countOf(s, 'target')).toBe(before);
  });

  it('--dry-run also finds what the stored data would refuse: a unique value already stored, a relation id with no record', async () => {
    const stored = await run(['records', 'create', 'target', '--set', 'title=stored-once', '--json']);
    expect(stored.code).toBe(0);
    const acme = JSON.parse((await run(['records', 'create', 'company', '--set', 'name=DryAcme', '--json'])).stdout) as { id: string };
    const ghost = '00000000-0000-7000-8000-000000000000';
    const before = await countOf(s, 'target');
    writeFileSync(
      join(cwd, 'dry-stored.ndjson'),
      [
        { title: 'stored-once' },
        { title: 'fresh-1', company: acme.id, partners: [acme.id] },
        { title: 'fresh-2', company: ghost },
        { title: 'fresh-3', partners: [acme.id, ghost] },
        { title: 'fresh-4' },
      ].map((r) => JSON.stringify(r)).join('\n') + '\n',
    );
    // --batch 2: the checks run per batch, and a refusal is reported with its own line.
    const r = await run(['records', 'import', 'target', 'dry-stored.ndjson', '--dry-run', '--batch', '2', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ dryRun: true, rows: 5, imported: 0, refused: 3 });
    expect(r.stderr).toContain('line 1: title must be unique: a stored record already has "stored-once"');
    expect(r.stderr).toContain(`line 3: company: no company record "${ghost}"`);
    expect(r.stderr).toContain(`line 4: partners: no company record "${ghost}"`);
    expect(r.stderr).not.toMatch(/line [25]:/);
    expect(await countOf(s, 'target')).toBe(before);
    // What the dry run said is what the import then does: the same three rows are refused.
    const real = await run(['records', 'import', 'target', 'dry-stored.ndjson', '--on-error', 'skip', '--json']);
    expect(JSON.parse(real.stdout)).toMatchObject({ imported: 2, refused: 3 });
  });

  it('--dry-run says which stored check it could not make (a key that may not read the relation target)', async () => {
    const role = { name: 'target_only', schema: 'read', permissions: [{ object: 'target', actions: ['read', 'create'] }] };
    expect((await s.call('POST', '/roles', { body: role })).status).toBe(201);
    const key = await s.keyFor('target_only');
    writeFileSync(join(cwd, 'dry-blind.ndjson'), `${JSON.stringify({ title: 'blind-1', company: '00000000-0000-7000-8000-000000000001' })}\n`);
    const r = await cli(s, ['records', 'import', 'target', 'dry-blind.ndjson', '--dry-run'], { cwd, key });
    // Not refused on a guess: the check is skipped, and said to be.
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('dry run: relation company → company not checked against stored records (SCHEMA_FORBIDDEN)');
    expect(r.stdout).toContain('dry run: 1 of 1 rows of dry-blind.ndjson would be imported into target; 0 refused.');
  });
});
