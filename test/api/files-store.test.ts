import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobCount as blobsUnder, expectError, startTestServer, type TestServer } from './helpers.js';

/**
 * Files and documents wired into the real SQLite store (issue 5 part 3): record
 * create/update take document ids under the same rules as uploads, and deleting a record
 * or detaching a document leaves no document row, no file row and no bytes behind.
 */
let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer();
  await srv.defineObject('deal', [
    { name: 'title', type: 'text' },
    { name: 'contract', type: 'document', accepts: ['application/pdf'], maxFileSize: 1024 },
    { name: 'attachments', type: 'document', multiple: true },
  ]);
});
afterAll(async () => srv?.close());

async function upload(path: string, data: string, type: string): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append('file', new Blob([data], { type }), 'f');
  const res = await fetch(srv.base + path, { method: 'POST', headers: { authorization: `Bearer ${srv.ownerKey}` }, body: form });
  return { status: res.status, body: await res.json() };
}

const blobCount = () => blobsUnder(join(srv.dataDir, 'files'));

async function newDeal(values: Record<string, unknown> = { title: 'd' }) {
  const r = await srv.call('POST', '/records/deal', { body: values });
  return r;
}

describe('document attributes in the SQLite store', () => {
  it('an upload shows in the record; clearing the value deletes document, file and bytes', async () => {
    const deal = (await newDeal()).body.data;
    const up = await upload(`/upload/deal/${deal.id}/contract`, '%PDF', 'application/pdf');
    expect(up.status).toBe(201);
    const rec = (await srv.call('GET', `/records/deal/${deal.id}`)).body.data;
    expect(rec.values.contract).toBe(up.body.data.id);
    expect(rec.version).toBe(2);
    expect(blobCount()).toBe(1);

    const cleared = await srv.call('PUT', `/records/deal/${deal.id}`, { body: { contract: null }, headers: { 'if-match': '*' } });
    expect(cleared.status).toBe(200);
    expectError(await srv.call('GET', `/documents/${up.body.data.id}`), { status: 404, code: 'DOCUMENT_NOT_FOUND_FOR_OPERATION' });
    expectError(await srv.call('GET', `/files/${up.body.data.fileId}`), { status: 404, code: 'DOCUMENT_NOT_FOUND_FOR_OPERATION' });
    expect(blobCount()).toBe(0);
  });

  it('record create takes existing document ids (moving them) and refuses unknown ones', async () => {
    const a = (await newDeal()).body.data;
    const doc = (await upload(`/upload/deal/${a.id}/attachments`, 'notes', 'text/plain')).body.data;
    const b = await newDeal({ title: 'b', attachments: [doc.id] });
    expect(b.status).toBe(201);
    expect(b.body.data.values.attachments).toEqual([doc.id]);
    expect((await srv.call('GET', `/documents/${doc.id}`)).body.data.recordId).toBe(b.body.data.id);
    expect((await srv.call('GET', `/records/deal/${a.id}`)).body.data.values.attachments).toEqual([]);

    expectError(await newDeal({ attachments: ['00000000-0000-4000-8000-000000000000'] }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    // The same rules as an upload: a text file cannot become a pdf-only contract…
    expectError(await srv.call('PUT', `/records/deal/${a.id}`, { body: { contract: doc.id }, headers: { 'if-match': '*' } }), {
      status: 400,
      code: 'DOCUMENT_MIME_NOT_ACCEPTED',
    });
    // …and one document fills one slot, not two attributes of the same record.
    expectError(await srv.call('PUT', `/records/deal/${b.body.data.id}`, { body: { contract: doc.id }, headers: { 'if-match': '*' } }), {
      status: 400,
      code: 'SCHEMA_VALIDATION_FAILED',
      errors: true,
    });
    // The refused writes changed nothing.
    expect((await srv.call('GET', `/documents/${doc.id}`)).body.data.recordId).toBe(b.body.data.id);
    await srv.call('DELETE', `/records/deal/${b.body.data.id}`);
    expect(blobCount()).toBe(0);
  });

  it('deleting records (one or in bulk) deletes their documents, files and bytes', async () => {
    const one = (await newDeal()).body.data;
    const two = (await newDeal()).body.data;
    await upload(`/upload/deal/${one.id}/attachments`, 'x1', 'text/plain');
    await upload(`/upload/deal/${two.id}/attachments`, 'x2', 'text/plain');
    const d = await upload(`/upload/deal/${two.id}/contract`, '%PDF two', 'application/pdf');
    expect(blobCount()).toBe(3);
    expect((await srv.call('DELETE', `/records/deal/${one.id}`)).status).toBe(200);
    expect(blobCount()).toBe(2);
    expect((await srv.call('POST', '/records/deal/bulk-delete', { body: { ids: [two.id] } })).status).toBe(200);
    expect(blobCount()).toBe(0);
    expectError(await srv.call('GET', `/documents/${d.body.data.id}`), { status: 404, code: 'DOCUMENT_NOT_FOUND_FOR_OPERATION' });
  });

  it('upload to a missing record is 404 and keeps nothing', async () => {
    const r = await upload('/upload/deal/00000000-0000-4000-8000-000000000000/contract', '%PDF', 'application/pdf');
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('SCHEMA_RECORD_NOT_FOUND');
    expect(blobCount()).toBe(0);
  });
});

describe('files across a restart', () => {
  it('a file uploaded before a restart is still there, byte-exact', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dataDir = mkdtempSync(join(tmpdir(), 'ss-files-restart-'));
    try {
      const first = await startTestServer({ dataDir });
      const form = new FormData();
      form.append('file', new Blob(['survives restarts'], { type: 'text/plain' }), 'keep.txt');
      const up = await fetch(`${first.base}/files`, { method: 'POST', headers: { authorization: `Bearer ${first.ownerKey}` }, body: form });
      const id = ((await up.json()) as { data: { id: string } }).data.id;
      await first.close();

      const second = await startTestServer({ dataDir });
      try {
        const res = await fetch(`${second.base}/files/${id}/content`, { headers: { authorization: `Bearer ${second.ownerKey}` } });
        expect(res.status).toBe(200);
        expect(await res.text()).toBe('survives restarts');
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('document slots follow schema changes', () => {
  it('renaming a document attribute keeps its documents attached', async () => {
    await srv.defineObject('memo', [{ name: 'scan', type: 'document' }]);
    const memo = (await srv.call('POST', '/records/memo', { body: {} })).body.data;
    const doc = (await upload(`/upload/memo/${memo.id}/scan`, 'scan', 'image/png')).body.data;
    const renamed = await srv.call('PUT', '/schema/objects/memo/attributes/scan', { body: { name: 'scanned' } });
    expect(renamed.status).toBe(200);
    expect((await srv.call('GET', `/documents/${doc.id}`)).body.data.attribute).toBe('scanned');
    const rec = (await srv.call('GET', `/records/memo/${memo.id}`)).body.data;
    expect(rec.values.scanned).toBe(doc.id);
    // The record can be written with its own document again.
    expect((await srv.call('PUT', `/records/memo/${memo.id}`, { body: { scanned: doc.id }, headers: { 'if-match': '*' } })).status).toBe(200);
    // Dropping the attribute takes the documents, files and bytes with it.
    expect((await srv.call('DELETE', '/schema/objects/memo/attributes/scanned')).status).toBe(200);
    expectError(await srv.call('GET', `/documents/${doc.id}`), { status: 404, code: 'DOCUMENT_NOT_FOUND_FOR_OPERATION' });
    expect(blobCount()).toBe(0);
  });
});

describe('an upload addressed by the object id', () => {
  it('names the object by its name in the document, so the record owns it like any other', async () => {
    await srv.defineObject('ticket', [{ name: 'scan', type: 'document' }]);
    const objectId = (await srv.call('GET', '/schema/objects/ticket')).body.data.id as string;
    const ticket = (await srv.call('POST', '/records/ticket', { body: {} })).body.data;
    const up = await upload(`/upload/${objectId}/${ticket.id}/scan`, 'scan', 'image/png');
    expect(up.status).toBe(201);
    expect(up.body.data.object).toBe('ticket');
    expect((await srv.call('GET', `/records/ticket/${ticket.id}`)).body.data.values.scan).toBe(up.body.data.id);
    // Deleting the record takes its document, file and bytes (no row left naming an object id).
    expect((await srv.call('DELETE', `/records/ticket/${ticket.id}`)).status).toBe(200);
    expectError(await srv.call('GET', `/documents/${up.body.data.id}`), { status: 404, code: 'DOCUMENT_NOT_FOUND_FOR_OPERATION' });
    expect(blobCount()).toBe(0);
  });
});
