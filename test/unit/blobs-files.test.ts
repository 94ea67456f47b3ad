import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../engine/errors.js';
import type { AttributeSpec } from '../../engine/model/attribute.js';
import type { RecordOut, StoredObject } from '../../engine/model/stored.js';
import { BlobStore } from '../../engine/store/blobs.js';
import { FilesEngine, cleanFileName, mimeAccepted, type RecordPort } from '../../engine/store/sqlite/files.js';
import type { Actor } from '../../engine/store/types.js';

/**
 * FilesEngine over a real SQLite file and real blob folder. The record side is a small
 * in-memory port that calls the engine's document hook the way the SQLite store does
 * (inside the write's transaction), so the rules are tested without the full store.
 */
const member: Actor = { keyId: 'k-member', role: 'member', scopes: null };
const other: Actor = { keyId: 'k-other', role: 'member', scopes: null };
const admin: Actor = { keyId: 'k-admin', role: 'admin', scopes: null };

const attrs: AttributeSpec[] = [
  { name: 'contract', type: 'document', accepts: ['application/pdf', 'image/*'], maxFileSize: 1000 },
  { name: 'attachments', type: 'document', multiple: true },
  { name: 'title', type: 'text' },
];

let dir: string;
let db: Database.Database;
let blobs: BlobStore;
let files: FilesEngine;
let records: Map<string, RecordOut>;

function port(): RecordPort {
  const obj = { name: 'deal', attributes: attrs } as unknown as StoredObject;
  const p: RecordPort = {
    requireObject: async (n) => {
      if (n !== 'deal') throw new ServiceError('SCHEMA_OBJECT_NOT_FOUND', `no ${n}`);
      return obj;
    },
    getRecord: async (_o, id) => {
      const r = records.get(id);
      if (!r) throw new ServiceError('SCHEMA_RECORD_NOT_FOUND', `no ${id}`);
      return structuredClone(r);
    },
    updateRecord: (o, id, patch) =>
      atomically(async () => {
        const r = records.get(id)!;
        for (const [k, v] of Object.entries(patch)) {
          const spec = attrs.find((a) => a.name === k)!;
          if (spec.type === 'document') {
            const errors = await files.applyDocumentValue(p, o, id, spec, v, [k], member);
            if (errors.length) throw new ServiceError('SCHEMA_VALIDATION_FAILED', 'bad', { errors });
          }
          r.values[k] = v;
        }
        r.version++;
        return structuredClone(r);
      }),
  };
  return p;
}

/** A record write is one transaction; inside the FilesEngine's own it is part of that one. */
async function atomically<T>(fn: () => Promise<T>): Promise<T> {
  if (db.inTransaction) return fn();
  db.exec('BEGIN IMMEDIATE');
  try {
    const out = await fn();
    db.exec('COMMIT');
    return out;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

const rec = (id: string): RecordOut => ({ id, object: 'deal', version: 1, createdAt: '', updatedAt: '', values: {} });
const bytes = (s: string | Buffer) => Readable.from([Buffer.isBuffer(s) ? s : Buffer.from(s)]);
const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
function blobCount(root = blobs.root): number {
  let n = 0;
  for (const e of readdirSync(root, { withFileTypes: true })) n += e.isDirectory() ? blobCount(join(root, e.name)) : 1;
  return n;
}
async function code(p: Promise<unknown> | (() => unknown)): Promise<string | undefined> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    return (e as ServiceError).code;
  }
  return undefined;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ss-files-'));
  db = new Database(join(dir, 'test.db'));
  blobs = new BlobStore(join(dir, 'files'));
  records = new Map([['r1', rec('r1')], ['r2', rec('r2')]]);
  files = new FilesEngine(db, blobs, port(), { maxUploadBytes: 5000 });
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('helpers', () => {
  it('matches accepts with type/* wildcards, ignoring case and parameters', () => {
    expect(mimeAccepted('image/png', ['image/*'])).toBe(true);
    expect(mimeAccepted('Application/PDF; charset=x', ['application/pdf'])).toBe(true);
    expect(mimeAccepted('imagex/png', ['image/*'])).toBe(false);
    expect(mimeAccepted('text/plain', ['application/pdf', 'image/*'])).toBe(false);
    expect(mimeAccepted('text/plain', undefined)).toBe(true);
  });
  it('keeps a file name as metadata only', () => {
    expect(cleanFileName('../../etc/passwd')).toBe('passwd');
    expect(cleanFileName('C:\\x\\report.pdf')).toBe('report.pdf');
    expect(cleanFileName('..')).toBe('file');
    expect(cleanFileName(undefined)).toBe('file');
  });
});

describe('files', () => {
  it('uploads, reads, renames; identical content shares bytes', async () => {
    const a = await files.uploadFile({ name: 'a.txt', mimeType: 'text/plain', stream: bytes('same') }, member);
    const b = await files.uploadFile({ name: 'b.txt', mimeType: 'text/plain', stream: bytes('same') }, other);
    expect(a).toMatchObject({ name: 'a.txt', mimeType: 'text/plain', size: 4, uploadedBy: 'k-member' });
    expect(b.sha256).toBe(a.sha256);
    expect(blobCount()).toBe(1);
    expect(files.renameFile(a.id, 'renamed.txt', member).name).toBe('renamed.txt');
    // Deleting one keeps the bytes the other still uses; deleting both frees them.
    files.deleteFile(a.id, member);
    expect(blobCount()).toBe(1);
    files.deleteFile(b.id, other);
    expect(blobCount()).toBe(0);
    expect(await code(() => files.getFile(a.id))).toBe('DOCUMENT_NOT_FOUND_FOR_OPERATION');
  });

  it("refuses deleting someone else's upload with SCHEMA_ACCESS_DENIED; admins may", async () => {
    const f = await files.uploadFile({ name: 'a', mimeType: 'text/plain', stream: bytes('x') }, member);
    expect(await code(() => files.deleteFile(f.id, other))).toBe('SCHEMA_ACCESS_DENIED');
    expect(files.getFile(f.id).id).toBe(f.id);
    files.deleteFile(f.id, admin);
    expect(count('_ss_files')).toBe(0);
  });

  it("renaming follows the delete rule: someone else's upload is SCHEMA_ACCESS_DENIED; admins may", async () => {
    const f = await files.uploadFile({ name: 'mine.txt', mimeType: 'text/plain', stream: bytes('x') }, member);
    expect(await code(() => files.renameFile(f.id, 'stolen.txt', other))).toBe('SCHEMA_ACCESS_DENIED');
    expect(files.getFile(f.id).name).toBe('mine.txt');
    expect(files.renameFile(f.id, 'by-admin.txt', admin).name).toBe('by-admin.txt');
  });

  it('a refusal after the bytes are on disk (untilBodyEnds) keeps no row and no bytes', async () => {
    const refuse = async () => {
      throw new ServiceError('SCHEMA_VALIDATION_FAILED', 'Too many parts');
    };
    expect(await code(files.uploadFile({ name: 'a', mimeType: 'text/plain', stream: bytes('first'), untilBodyEnds: refuse }, member))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    );
    expect(await code(files.uploadDocument({ object: 'deal', recordId: 'r1', attribute: 'attachments' }, { name: 'a', mimeType: 'text/plain', stream: bytes('first'), untilBodyEnds: refuse }, member))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    );
    expect(count('_ss_files') + count('_ss_documents')).toBe(0);
    expect(blobCount()).toBe(0);
    expect(records.get('r1')!.version).toBe(1);
  });

  it('an upload over the server cap leaves no bytes and no row (413)', async () => {
    expect(await code(files.uploadFile({ name: 'big', mimeType: 'x/y', stream: bytes(Buffer.alloc(5001)) }, member))).toBe('PAYLOAD_TOO_LARGE');
    expect(count('_ss_files')).toBe(0);
    expect(blobCount()).toBe(0);
  });
});

describe('garbage at open', () => {
  it('removes bytes no row references and keeps the rest', async () => {
    const kept = await files.uploadFile({ name: 'k', mimeType: 'text/plain', stream: bytes('kept') }, member);
    // Bytes written but never given a row, as after a crash between rename and insert.
    const lost = await blobs.writeStream(bytes('lost'), { maxBytes: 100 });
    const reopened = new FilesEngine(db, blobs, port());
    expect(blobs.has(lost.sha256)).toBe(false);
    expect(blobs.has(kept.sha256)).toBe(true);
    expect(reopened.collectGarbage()).toBe(0);
  });
});

describe('documents', () => {
  it('upload attaches to the record, checks accepts, size and the single-file rule', async () => {
    const t = { object: 'deal', recordId: 'r1', attribute: 'contract' };
    expect(await code(files.uploadDocument(t, { name: 'a.txt', mimeType: 'text/plain', stream: bytes('x') }, member))).toBe('DOCUMENT_MIME_NOT_ACCEPTED');
    expect(await code(files.uploadDocument(t, { name: 'a.pdf', mimeType: 'application/pdf', stream: bytes(Buffer.alloc(1001)) }, member))).toBe('DOCUMENT_FILE_TOO_LARGE');
    expect(count('_ss_files') + count('_ss_documents') + blobCount()).toBe(0);

    const doc = await files.uploadDocument(t, { name: 'scan.png', mimeType: 'image/png', stream: bytes('png'), title: 'Signed' }, member);
    expect(doc).toMatchObject({ title: 'Signed', object: 'deal', recordId: 'r1', attribute: 'contract' });
    expect(records.get('r1')!.values['contract']).toBe(doc.id);
    expect(files.getFile(doc.fileId).name).toBe('scan.png');

    expect(await code(files.uploadDocument(t, { name: 'b.pdf', mimeType: 'application/pdf', stream: bytes('y') }, member))).toBe('DOCUMENT_MULTIPLE_NOT_ALLOWED');
    expect(count('_ss_documents')).toBe(1);
    expect(blobCount()).toBe(1);
  });

  it('multiple attributes collect ids; the title defaults to the file name', async () => {
    const t = { object: 'deal', recordId: 'r1', attribute: 'attachments' };
    const a = await files.uploadDocument(t, { name: 'a.txt', mimeType: 'text/plain', stream: bytes('a') }, member);
    const b = await files.uploadDocument(t, { name: 'b.txt', mimeType: 'text/plain', stream: bytes('b') }, member);
    expect(a.title).toBe('a.txt');
    expect(records.get('r1')!.values['attachments']).toEqual([a.id, b.id]);
  });

  it('PATCH title, DELETE detaches from the record and frees the bytes; unknown ids 404', async () => {
    const t = { object: 'deal', recordId: 'r1', attribute: 'attachments' };
    const a = await files.uploadDocument(t, { name: 'a.txt', mimeType: 'text/plain', stream: bytes('a') }, member);
    const b = await files.uploadDocument(t, { name: 'b.txt', mimeType: 'text/plain', stream: bytes('b') }, member);
    expect(files.renameDocument(a.id, 'New').title).toBe('New');
    await files.deleteDocument(a.id, member);
    expect(records.get('r1')!.values['attachments']).toEqual([b.id]);
    expect(count('_ss_documents')).toBe(1);
    expect(count('_ss_files')).toBe(1);
    expect(blobCount()).toBe(1);
    expect(await code(() => files.getDocument(a.id))).toBe('DOCUMENT_NOT_FOUND_FOR_OPERATION');
    expect(await code(() => files.renameDocument(a.id, 'x'))).toBe('DOCUMENT_NOT_FOUND_FOR_OPERATION');
    expect(await code(() => files.deleteDocument(a.id, member))).toBe('DOCUMENT_NOT_FOUND_FOR_OPERATION');
  });

  it('record writes: ids must be this slot\'s documents; clearing detaches them; deleting records drops them', async () => {
    const t = { object: 'deal', recordId: 'r1', attribute: 'attachments' };
    const a = await files.uploadDocument(t, { name: 'a.txt', mimeType: 'text/plain', stream: bytes('a') }, member);
    const p = port();
    // Naming another record's document moves it: it leaves r1's value.
    await p.updateRecord('deal', 'r2', { attachments: [a.id] }, '*', member);
    expect(records.get('r1')!.values['attachments']).toEqual([]);
    expect(files.getDocument(a.id)).toMatchObject({ recordId: 'r2', attribute: 'attachments' });
    expect(await code(() => p.updateRecord('deal', 'r2', { contract: a.id }, '*', member))).toBe('SCHEMA_VALIDATION_FAILED');
    // Moving into an attribute whose accepts refuses it.
    await p.updateRecord('deal', 'r1', { attachments: [a.id] }, '*', member);
    expect(await code(() => p.updateRecord('deal', 'r2', { contract: a.id }, '*', member))).toBe('DOCUMENT_MIME_NOT_ACCEPTED');
    expect(await code(() => p.updateRecord('deal', 'r2', { attachments: ['nope'] }, '*', member))).toBe('SCHEMA_VALIDATION_FAILED');
    expect(await code(() => p.updateRecord('deal', 'r1', { contract: ['x', 'y'] }, '*', member))).toBe('DOCUMENT_MULTIPLE_NOT_ALLOWED');
    await p.updateRecord('deal', 'r1', { attachments: [] }, '*', member);
    files.flushReleases();
    expect(count('_ss_documents') + count('_ss_files') + blobCount()).toBe(0);

    await files.uploadDocument(t, { name: 'b.txt', mimeType: 'text/plain', stream: bytes('b') }, member);
    db.transaction(() => files.deleteRecordDocuments('deal', ['r1']))();
    files.flushReleases();
    expect(count('_ss_documents') + count('_ss_files') + blobCount()).toBe(0);
  });

  it('a failure after the bytes are written rolls back rows and frees the bytes', async () => {
    const t = { object: 'deal', recordId: 'r1', attribute: 'attachments' };
    // The record is deleted while the bytes stream in: the checks inside the transaction catch it.
    async function* racing() {
      yield Buffer.from('first half ');
      records.delete('r1');
      yield Buffer.from('second half');
    }
    const stream = Readable.from(racing());
    expect(await code(files.uploadDocument(t, { name: 'a', mimeType: 'text/plain', stream }, member))).toBe('SCHEMA_RECORD_NOT_FOUND');
    expect(count('_ss_documents') + count('_ss_files') + blobCount()).toBe(0);
  });
});
