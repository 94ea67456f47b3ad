import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dealCalls, startDealServer } from './files-deal.js';
import { blobCount as blobsUnder, expectError, type Reply, type TestServer } from './helpers.js';

/**
 * A document belongs to one record's slot (contract.md §3), so one document id named twice
 * in one write — by two items of a batch, by two attributes of one item, or twice in one
 * list — is refused with nothing written. Before, a bulk-update naming C's document for B
 * and for C stored [] on both while the document still claimed C, and the next upload to C
 * deleted it and its bytes; a bulk-create answered values it had not stored.
 */
let srv: TestServer;

beforeAll(async () => {
  srv = await startDealServer();
});
afterAll(async () => srv?.close());

async function upload(recordId: string, attribute: string, data: string): Promise<{ id: string; fileId: string }> {
  const form = new FormData();
  form.append('file', new Blob([data], { type: 'application/pdf' }), 'contract.pdf');
  const res = await fetch(`${srv.base}/upload/deal/${recordId}/${attribute}`, { method: 'POST', headers: { authorization: `Bearer ${srv.ownerKey}` }, body: form });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { id: string; fileId: string } }).data;
}

const blobCount = () => blobsUnder(join(srv.dataDir, 'files'));

const { deal, read } = dealCalls(() => srv);
const owner = async (docId: string) => (await srv.call('GET', `/documents/${docId}`)).body.data?.recordId as string | undefined;
const content = async (fileId: string) => (await fetch(`${srv.base}/files/${fileId}/content`, { headers: { authorization: `Bearer ${srv.ownerKey}` } })).text();
const count = async () => (await srv.call('POST', '/records/deal/search', { body: { limit: 500 } })).body.data.length as number;

function refusedAt(reply: Reply, path: (string | number)[]): void {
  expectError(reply, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
  expect(reply.body.errors.map((e: { path: unknown }) => e.path)).toEqual([path]);
}

/** B and C, C holding a document in `attribute`; everything a refused write must leave as it was. */
async function setup(attribute: 'atts' | 'one') {
  const B = await deal('B');
  const C = await deal('C');
  const bytes = `IMPORTANT CONTRACT ${Math.random()}`;
  const doc = await upload(C.id, attribute, bytes);
  const before = { B: await read(B.id), C: await read(C.id), blobs: blobCount(), records: await count() };
  const unchanged = async () => {
    expect(await read(B.id)).toEqual(before.B);
    expect(await read(C.id)).toEqual(before.C);
    expect(await owner(doc.id)).toBe(C.id);
    expect(await content(doc.fileId)).toBe(bytes);
    expect(blobCount()).toBe(before.blobs);
    expect(await count()).toBe(before.records);
  };
  return { B, C, doc, bytes, before, unchanged };
}

describe('one document named twice in one write is refused, nothing written', () => {
  it('bulk-update naming C’s document for B and for C (multiple attribute)', async () => {
    const { B, C, doc, bytes, unchanged } = await setup('atts');
    const r = await srv.call('POST', '/records/deal/bulk-update', {
      body: { records: [{ id: B.id, values: { atts: [doc.id] } }, { id: C.id, values: { atts: [doc.id] } }] },
    });
    refusedAt(r, ['records', 1, 'values', 'atts']);
    await unchanged();
    // The next ordinary upload to C adds beside the document instead of deleting it.
    const other = await upload(C.id, 'atts', 'OTHER');
    expect((await read(C.id)).values['atts']).toEqual([doc.id, other.id]);
    expect(await owner(doc.id)).toBe(C.id);
    expect(await content(doc.fileId)).toBe(bytes);
  });

  it('bulk-update naming C’s document for B and for C (single-file attribute)', async () => {
    const { B, C, doc, unchanged } = await setup('one');
    const r = await srv.call('POST', '/records/deal/bulk-update', {
      body: { records: [{ id: B.id, values: { one: doc.id } }, { id: C.id, values: { one: doc.id } }] },
    });
    refusedAt(r, ['records', 1, 'values', 'one']);
    await unchanged();
  });

  it('bulk-create naming one document for two new records', async () => {
    const { doc, unchanged } = await setup('atts');
    const r = await srv.call('POST', '/records/deal/bulk-create', {
      body: { records: [{ name: 'b', atts: [doc.id] }, { name: 'c', atts: [doc.id] }] },
    });
    refusedAt(r, ['records', 1, 'atts']);
    await unchanged();
  });

  it('the same id twice in one list, or in two attributes of one record', async () => {
    const { B, C, doc, unchanged } = await setup('atts');
    refusedAt(await srv.call('PUT', `/records/deal/${C.id}`, { body: { atts: [doc.id, doc.id] }, headers: { 'if-match': '*' } }), ['atts']);
    refusedAt(await srv.call('POST', '/records/deal/bulk-update', { body: { records: [{ id: B.id, values: { atts: [doc.id, doc.id] } }] } }), [
      'records', 0, 'values', 'atts',
    ]);
    refusedAt(await srv.call('POST', '/records/deal', { body: { name: 'x', atts: [doc.id], one: doc.id } }), ['one']);
    refusedAt(await srv.call('POST', '/records/deal/bulk-create', { body: { records: [{ name: 'x', atts: [doc.id, doc.id] }] } }), ['records', 0, 'atts']);
    await unchanged();
  });
});

describe('moving a document keeps the record values and the document owner in agreement', () => {
  it('a single update moves C’s document to B: C lets go of it, no bytes lost', async () => {
    const { B, C, doc, bytes, before } = await setup('atts');
    const moved = await srv.call('PUT', `/records/deal/${B.id}`, { body: { atts: [doc.id] }, headers: { 'if-match': '*' } });
    expect(moved.status).toBe(200);
    expect(moved.body.data.values.atts).toEqual([doc.id]);
    expect(await read(B.id)).toMatchObject({ version: before.B.version + 1, values: { atts: [doc.id] } });
    expect(await read(C.id)).toMatchObject({ version: before.C.version + 1, values: { atts: [] } });
    expect(await owner(doc.id)).toBe(B.id);
    // An upload to C no longer touches the moved document.
    await upload(C.id, 'atts', 'OTHER');
    expect(await owner(doc.id)).toBe(B.id);
    expect(await content(doc.fileId)).toBe(bytes);
  });

  it('a single update moves C’s single-file document to B: C’s value becomes null', async () => {
    const { B, C, doc, bytes } = await setup('one');
    expect((await srv.call('PUT', `/records/deal/${B.id}`, { body: { one: doc.id }, headers: { 'if-match': '*' } })).status).toBe(200);
    expect((await read(B.id)).values['one']).toBe(doc.id);
    expect((await read(C.id)).values['one']).toBeNull();
    expect(await owner(doc.id)).toBe(B.id);
    // C's slot is free again, and filling it leaves B's document alone.
    await upload(C.id, 'one', 'OTHER');
    expect(await owner(doc.id)).toBe(B.id);
    expect(await content(doc.fileId)).toBe(bytes);
  });

  it('a batch that empties C and gives its document to B moves it, whatever the item order', async () => {
    for (const order of ['C first', 'B first'] as const) {
      const { B, C, doc, bytes } = await setup('atts');
      const items = [{ id: C.id, values: { atts: [] } }, { id: B.id, values: { atts: [doc.id] } }];
      const r = await srv.call('POST', '/records/deal/bulk-update', { body: { records: order === 'C first' ? items : items.reverse() } });
      expect(r.status, order).toBe(200);
      // The answer is what is stored.
      for (const rec of r.body.data.records) expect(await read(rec.id)).toEqual(rec);
      expect((await read(B.id)).values['atts']).toEqual([doc.id]);
      expect((await read(C.id)).values['atts']).toEqual([]);
      expect(await owner(doc.id)).toBe(B.id);
      expect(await content(doc.fileId)).toBe(bytes);
    }
  });

  it('a batch where C writes another attribute while B takes its document answers what it stored', async () => {
    const { B, C, doc } = await setup('atts');
    const r = await srv.call('POST', '/records/deal/bulk-update', {
      body: { records: [{ id: C.id, values: { name: 'C2' } }, { id: B.id, values: { atts: [doc.id] } }] },
    });
    expect(r.status).toBe(200);
    for (const rec of r.body.data.records) expect(await read(rec.id)).toEqual(rec);
    expect((await read(C.id)).values).toMatchObject({ name: 'C2', atts: [] });
    expect(await owner(doc.id)).toBe(B.id);
  });
});
