import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor, Store } from '../../engine/store/types.js';
import { dealCalls, startDealServer } from './files-deal.js';
import { blobCount as blobsUnder, expectError, openRawReader, openTempStore, type TestServer } from './helpers.js';

/**
 * Files and documents under interleaving writes (issue 14: each invariant says how it holds
 * when writes interleave). Concurrent clients over HTTP race for one single-file slot and
 * for one document; an upload whose body is still arriving holds no other request; and a
 * randomised run of concurrent uploads, moves, detaches and deletes through the store keeps
 * record values, document rows, file rows and bytes in agreement after every round.
 */
let srv: TestServer;

beforeAll(async () => {
  srv = await startDealServer();
});
afterAll(async () => srv?.close());

const blobCount = (root: string) => blobsUnder(root, { temporaries: false });

async function upload(path: string, data: string): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([data], { type: 'application/pdf' }), 'f.pdf');
  return fetch(`${srv.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${srv.ownerKey}` }, body: form });
}

const { deal, read } = dealCalls(() => srv);

describe('concurrent clients', () => {
  it('six uploads racing for one single-file slot: one document, five DOCUMENT_MULTIPLE_NOT_ALLOWED, only its bytes kept', async () => {
    const d = await deal('race');
    const blobsBefore = blobCount(join(srv.dataDir, 'files'));
    const replies = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => upload(`/upload/deal/${d.id}/one`, `racer ${i} ${Math.random()}`)));
    const bodies = await Promise.all(replies.map(async (r) => ({ status: r.status, body: (await r.json()) as { code?: string; data?: { id: string } } })));
    const won = bodies.filter((b) => b.status === 201);
    expect(won).toHaveLength(1);
    for (const lost of bodies.filter((b) => b.status !== 201)) expect(lost).toMatchObject({ status: 400, body: { code: 'DOCUMENT_MULTIPLE_NOT_ALLOWED' } });
    const record = await read(d.id);
    expect(record.values['one']).toBe(won[0]!.body.data!.id);
    expect(record.version).toBe(2);
    expect(blobCount(join(srv.dataDir, 'files'))).toBe(blobsBefore + 1);
  });

  it('five records claiming one document at once: it ends in exactly one of them, the others and its first record hold nothing', async () => {
    const C = await deal('C');
    const up = await upload(`/upload/deal/${C.id}/atts`, `claimed ${Math.random()}`);
    const doc = ((await up.json()) as { data: { id: string } }).data;
    const claimants = await Promise.all([1, 2, 3, 4, 5].map((i) => deal(`B${i}`)));
    const replies = await Promise.all(claimants.map((b) => srv.call('PUT', `/records/deal/${b.id}`, { headers: { 'if-match': '*' }, body: { atts: [doc.id] } })));
    for (const r of replies) expect(r.status).toBe(200);
    const holder = ((await srv.call('GET', `/documents/${doc.id}`)).body.data as { recordId: string }).recordId;
    const values = await Promise.all([C, ...claimants].map(async (r) => ({ id: r.id, atts: (await read(r.id)).values['atts'] })));
    expect(values.filter((v) => v.id === holder)).toEqual([{ id: holder, atts: [doc.id] }]);
    for (const v of values.filter((x) => x.id !== holder)) expect(v.atts ?? []).toEqual([]);
  });

  it('an upload whose body is still arriving holds no other request; it lands when the body ends', async () => {
    const boundary = 'xxSLOWxx';
    const url = new URL(`${srv.base}/files`);
    let answer!: (v: { status: number; body: string }) => void;
    const done = new Promise<{ status: number; body: string }>((resolve) => (answer = resolve));
    const req = httpRequest({
      host: url.hostname, port: url.port, path: url.pathname, method: 'POST',
      headers: { authorization: `Bearer ${srv.ownerKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => answer({ status: res.statusCode ?? 0, body }));
    });
    req.write(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="slow.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`);
    req.write(Buffer.alloc(256 * 1024, 7));
    // Meanwhile other writes and reads answer at once.
    const other = await deal('while uploading');
    expect((await srv.call('PUT', `/records/deal/${other.id}`, { headers: { 'if-match': '*' }, body: { name: 'still' } })).status).toBe(200);
    const quick = await upload(`/upload/deal/${other.id}/one`, 'quick');
    expect(quick.status).toBe(201);
    req.end(`\r\n--${boundary}--\r\n`);
    const slow = await done;
    expect(slow.status).toBe(201);
    expect((JSON.parse(slow.body) as { data: { size: number } }).data.size).toBe(256 * 1024);
  });
});

describe('randomised interleavings through the store', () => {
  const actor: Actor = { keyId: 'k', role: 'owner', scopes: null };
  type Op =
    | { kind: 'upload'; record: number; attribute: 'atts' | 'one' }
    | { kind: 'claim'; record: number; attribute: 'atts' | 'one'; doc: number }
    | { kind: 'clear'; record: number; attribute: 'atts' | 'one' }
    | { kind: 'deleteDocument'; doc: number }
    | { kind: 'deleteRecord'; record: number };
  const attribute = fc.constantFrom<'atts' | 'one'>('atts', 'one');
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('upload' as const), record: fc.nat(3), attribute }),
    fc.record({ kind: fc.constant('claim' as const), record: fc.nat(3), attribute, doc: fc.nat(7) }),
    fc.record({ kind: fc.constant('clear' as const), record: fc.nat(3), attribute }),
    fc.record({ kind: fc.constant('deleteDocument' as const), doc: fc.nat(7) }),
    fc.record({ kind: fc.constant('deleteRecord' as const), record: fc.nat(3) }),
  );

  type Raw = Awaited<ReturnType<typeof openRawReader>>;
  /** A list column: JSON text on SQLite, jsonb (parsed by pg) on PostgreSQL. */
  const listOf = (v: string | string[] | null): string[] => (v === null ? [] : typeof v === 'string' ? (JSON.parse(v) as string[]) : v);

  /** Record values, document rows, file rows and bytes agree (contract.md §3: no orphans, no dangling ids). */
  async function checkAgreement(db: Raw, blobRoot: string): Promise<void> {
    const docs = await db.all<{ id: string; record_id: string; attribute: string; file_id: string }>('SELECT id, record_id, attribute, file_id FROM _ss_documents');
    // Every id a record value holds, with its slot: a document held twice shows twice.
    const held: string[] = [];
    for (const r of await db.all<{ id: string; atts: string | string[] | null; one: string | null }>('SELECT id, atts, one FROM r_deal')) {
      for (const id of listOf(r.atts)) held.push(`${id} in ${r.id}.atts`);
      if (r.one !== null) held.push(`${r.one} in ${r.id}.one`);
    }
    expect(docs.map((d) => `${d.id} in ${d.record_id}.${d.attribute}`).sort()).toEqual(held.sort());
    const files = await db.all<{ id: string; sha256: string }>('SELECT id, sha256 FROM _ss_files');
    expect(new Set(files.map((f) => f.id))).toEqual(new Set(docs.map((d) => d.file_id)));
    expect(blobCount(blobRoot)).toBe(new Set(files.map((f) => f.sha256)).size);
  }

  it('concurrent rounds of uploads, moves, detaches and deletes keep values, rows and bytes in agreement', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }), async (rounds) => {
        const dir = mkdtempSync(join(tmpdir(), 'ss-files-race-'));
        const store: Store = await openTempStore(dir);
        const db = await openRawReader(dir);
        try {
          await store.createObject({ name: 'deal', attributes: [{ name: 'atts', type: 'document', multiple: true }, { name: 'one', type: 'document' }] }, { kind: 'runtime' });
          const records: string[] = [];
          for (let i = 0; i < 4; i++) records.push((await store.createRecord('deal', {}, actor)).id);
          const documents: string[] = [];
          let n = 0;
          const run = async (o: Op): Promise<void> => {
            const files = store.files!;
            if (o.kind === 'upload') {
              const doc = await files.uploadDocument({ object: 'deal', recordId: records[o.record]!, attribute: o.attribute }, { name: 'f', mimeType: 'text/plain', stream: Readable.from([Buffer.from(`bytes ${n++ % 3}`)]) }, actor);
              documents.push(doc.id);
            } else if (o.kind === 'claim') {
              const doc = documents[o.doc % Math.max(documents.length, 1)];
              if (doc !== undefined) await store.updateRecord('deal', records[o.record]!, { [o.attribute]: o.attribute === 'atts' ? [doc] : doc }, '*', actor);
            } else if (o.kind === 'clear') {
              await store.updateRecord('deal', records[o.record]!, { [o.attribute]: null }, '*', actor);
            } else if (o.kind === 'deleteDocument') {
              const doc = documents[o.doc % Math.max(documents.length, 1)];
              if (doc !== undefined) await files.deleteDocument(doc, actor);
            } else {
              await store.deleteRecord('deal', records[o.record]!);
              records[o.record] = (await store.createRecord('deal', {}, actor)).id;
            }
          };
          for (const round of rounds) {
            // Refusals (a full single-file slot, a document already gone, a record deleted meanwhile) are expected; partial writes are not.
            await Promise.allSettled(round.map(run));
            await checkAgreement(db, join(dir, 'files'));
          }
        } finally {
          await db.close();
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 25 },
    );
  });
});

describe('deleting a file a document uses', () => {
  it('is refused while the document exists, even when asked at the same time as a record write that keeps it', async () => {
    const d = await deal('keeps');
    const up = (await (await upload(`/upload/deal/${d.id}/atts`, `kept ${Math.random()}`)).json()) as { data: { id: string; fileId: string } };
    const [del, put] = await Promise.all([
      srv.call('DELETE', `/files/${up.data.fileId}`),
      srv.call('PUT', `/records/deal/${d.id}`, { headers: { 'if-match': '*' }, body: { atts: [up.data.id] } }),
    ]);
    expectError(del, { status: 409, code: 'SCHEMA_CONFLICT' });
    expect(put.status).toBe(200);
    expect((await srv.call('GET', `/files/${up.data.fileId}`)).status).toBe(200);
  });
});
