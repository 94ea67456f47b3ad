import { clearOfMinuteEnd } from '../support/minute-window.js';
import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AttributeSpec } from '../../engine/model/attribute.js';
import { openStore } from '../../engine/store/index.js';
import type { Store } from '../../engine/store/types.js';
import { runCli } from './cli.js';
import { expectError, startTestServer, type TestServer } from './helpers.js';

/**
 * Files and documents over real multipart HTTP (contract.md §3 "Files and documents"):
 * a real server on port 0 over the real store — a real SQLite file and blob folder — with
 * one object `deal`; each test gets two fresh records, r1 and r2.
 */
const attrs: AttributeSpec[] = [
  { name: 'contract', type: 'document', accepts: ['application/pdf', 'image/*'], maxFileSize: 64 * 1024 },
  { name: 'attachments', type: 'document', multiple: true },
  { name: 'title', type: 'text' },
];

let srv: TestServer;
let dir: string;
let db: Database.Database;
let store: Store;
let blobRoot: string;
let r1: string;
let r2: string;

const value = async (id: string, attribute: string) => (await store.getRecord('deal', id)).values[attribute];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ss-files-api-'));
  blobRoot = join(dir, 'files');
  store = openStore({ path: join(dir, 'schemasync.db'), filesDir: blobRoot, maxUploadBytes: 4 * 1024 * 1024 });
  await store.createObject({ name: 'deal', attributes: attrs }, { kind: 'runtime' });
  db = new Database(join(dir, 'schemasync.db'));
  srv = await startTestServer({ store, dataDir: dir });
});
afterAll(async () => {
  await srv.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  const actor = { keyId: 'test', role: 'owner', scopes: null } as const;
  r1 = (await store.createRecord('deal', {}, actor)).id;
  r2 = (await store.createRecord('deal', {}, actor)).id;
});

interface Reply { status: number; body: any; headers: Headers }

async function upload(path: string, parts: { file?: { data: Buffer | string; name?: string; type?: string }; title?: string; titleAfter?: boolean }, key = srv.ownerKey): Promise<Reply> {
  const form = new FormData();
  if (parts.title !== undefined && !parts.titleAfter) form.append('title', parts.title);
  if (parts.file) {
    const data = typeof parts.file.data === 'string' ? Buffer.from(parts.file.data) : parts.file.data;
    form.append('file', new Blob([data], { type: parts.file.type ?? 'application/octet-stream' }), parts.file.name ?? 'f.bin');
  }
  if (parts.title !== undefined && parts.titleAfter) form.append('title', parts.title);
  const res = await fetch(srv.base + path, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const count = (t: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n;
function blobFiles(root = blobRoot): string[] {
  const out: string[] = [];
  for (const e of readdirSync(root, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...blobFiles(join(root, e.name)));
    else out.push(e.name);
  }
  return out;
}
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const asReply = (r: Reply) => ({ ...r, text: JSON.stringify(r.body) });

describe('POST /files and the file routes', () => {
  it('uploads, describes, downloads byte-exact with its type, renames and deletes', async () => {
    const data = randomBytes(300_000);
    const up = await upload('/files', { file: { data, name: 'r\u00e9sum\u00e9 final.pdf', type: 'application/pdf' } });
    expect(up.status).toBe(201);
    const f = up.body.data;
    expect(f).toMatchObject({ name: 'r\u00e9sum\u00e9 final.pdf', mimeType: 'application/pdf', size: data.length, sha256: sha(data) });
    expect(typeof f.uploadedBy).toBe('string');
    expect(Object.keys(f).sort()).toEqual(['createdAt', 'id', 'mimeType', 'name', 'sha256', 'size', 'uploadedBy']);

    const got = await srv.call('GET', `/files/${f.id}`);
    expect(got.body.data).toEqual(f);

    const res = await fetch(`${srv.base}/files/${f.id}/content`, { headers: { authorization: `Bearer ${srv.ownerKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toContain("filename*=UTF-8''r%C3%A9sum%C3%A9%20final.pdf");
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);

    const renamed = await srv.call('PUT', `/files/${f.id}`, { body: { name: 'cv.pdf' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.name).toBe('cv.pdf');

    const del = await srv.call('DELETE', `/files/${f.id}`);
    expect(del.body).toEqual({ success: true, data: { id: f.id } });
    expectError(await srv.call('GET', `/files/${f.id}`), { status: 404, code: 'DOCUMENT_NOT_FOUND_FOR_OPERATION' });
    expect(blobFiles()).toEqual([]);
  });

  it('keeps a name with a path in it as metadata only', async () => {
    const up = await upload('/files', { file: { data: 'x', name: '../../../etc/passwd', type: 'text/plain' } });
    expect(up.body.data.name).toBe('passwd');
    expect(blobFiles()).toEqual([up.body.data.sha256]);
    await srv.call('DELETE', `/files/${up.body.data.id}`);
  });

  it("deleting someone else's upload is a masked 500 SCHEMA_ACCESS_DENIED; admins may", async () => {
    const alice = await srv.keyFor('member');
    const bob = await srv.keyFor('member');
    const up = await upload('/files', { file: { data: 'alice', type: 'text/plain' } }, alice);
    expect(up.status).toBe(201);
    const r = await fetch(`${srv.base}/files/${up.body.data.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${bob}` } });
    expectError({ status: r.status, headers: r.headers, body: await r.json(), text: '' }, { status: 500, code: 'SCHEMA_ACCESS_DENIED', message: 'Internal server error' });
    expect((await srv.call('GET', `/files/${up.body.data.id}`)).status).toBe(200);
    const admin = await srv.keyFor('admin');
    expect((await srv.call('DELETE', `/files/${up.body.data.id}`, { key: admin })).status).toBe(200);
  });

  it("renaming someone else's upload is refused like deleting it (masked 500 SCHEMA_ACCESS_DENIED); admins may", async () => {
    const alice = await srv.keyFor('member');
    const bob = await srv.keyFor('member');
    const up = await upload('/files', { file: { data: 'alice', name: 'alice.txt', type: 'text/plain' } }, alice);
    const id = up.body.data.id;
    expectError(await srv.call('PUT', `/files/${id}`, { body: { name: 'bob.txt' }, key: bob }), {
      status: 500, code: 'SCHEMA_ACCESS_DENIED', message: 'Internal server error',
    });
    expect((await srv.call('GET', `/files/${id}`)).body.data.name).toBe('alice.txt');
    expect((await srv.call('PUT', `/files/${id}`, { body: { name: 'mine.txt' }, key: alice })).body.data.name).toBe('mine.txt');
    expect((await srv.call('PUT', `/files/${id}`, { body: { name: 'admin.txt' }, key: await srv.keyFor('admin') })).body.data.name).toBe('admin.txt');
    await srv.call('DELETE', `/files/${id}`);
  });

  it('viewers may read but not upload', async () => {
    const viewer = await srv.keyFor('viewer');
    expectError(asReply(await upload('/files', { file: { data: 'x' } }, viewer)), { status: 403, code: 'SCHEMA_FORBIDDEN' });
    expect(count('_ss_files')).toBe(0);
  });

  it('refuses a body that is not multipart or has no file field', async () => {
    expectError(await srv.call('POST', '/files', { body: { name: 'x' } }), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
    expectError(asReply(await upload('/files', { title: 'only a title' })), { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
  });

  it('an upload over the server limit is 413 and leaves no bytes and no row', async () => {
    const r = await upload('/files', { file: { data: Buffer.alloc(4 * 1024 * 1024 + 1), type: 'text/plain' } });
    expectError(asReply(r), { status: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect(count('_ss_files')).toBe(0);
    expect(readdirSync(blobRoot).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    expect(blobFiles()).toEqual([]);
  });

  it('an aborted upload leaves no bytes and no row', async () => {
    const boundary = 'xxBOUNDARYxx';
    const url = new URL(`${srv.base}/files`);
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: url.hostname, port: url.port, path: url.pathname, method: 'POST',
        headers: { authorization: `Bearer ${srv.ownerKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.write(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="half.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`);
      req.write(Buffer.alloc(512 * 1024, 1), () => {
        // Half a body, then the connection drops.
        setTimeout(() => { req.destroy(); resolve(); }, 100);
      });
    });
    // The server notices the reset asynchronously; wait until the temp file is gone.
    for (let i = 0; i < 100 && blobFiles().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(blobFiles()).toEqual([]);
    expect(count('_ss_files')).toBe(0);
    // And the server still answers.
    const after = await upload('/files', { file: { data: 'after', type: 'text/plain' } });
    expect(after.status).toBe(201);
    await srv.call('DELETE', `/files/${after.body.data.id}`);
  });
});

describe('POST /upload/:objectName/:recordId/:attribute and documents', () => {
  it('attaches to the record: 201 the document, the record holds its id', async () => {
    const pdf = Buffer.from('%PDF-1.7 ...');
    const r = await upload(`/upload/deal/${r1}/contract`, { file: { data: pdf, name: 'c.pdf', type: 'application/pdf' }, title: 'Signed contract' });
    expect(r.status).toBe(201);
    const doc = r.body.data;
    expect(Object.keys(doc).sort()).toEqual(['attribute', 'createdAt', 'fileId', 'id', 'object', 'recordId', 'title']);
    expect(doc).toMatchObject({ title: 'Signed contract', object: 'deal', recordId: r1, attribute: 'contract' });
    expect(await value(r1, 'contract')).toBe(doc.id);
    const content = await fetch(`${srv.base}/files/${doc.fileId}/content`, { headers: { authorization: `Bearer ${srv.ownerKey}` } });
    expect(Buffer.from(await content.arrayBuffer()).equals(pdf)).toBe(true);
    await srv.call('DELETE', `/documents/${doc.id}`);
  });

  it('accepts image/* by wildcard and refuses other types with DOCUMENT_MIME_NOT_ACCEPTED', async () => {
    expect((await upload(`/upload/deal/${r1}/contract`, { file: { data: 'png', type: 'image/png' } })).status).toBe(201);
    const r = await upload(`/upload/deal/${r2}/contract`, { file: { data: 'x', type: 'text/plain' } });
    expectError(asReply(r), { status: 400, code: 'DOCUMENT_MIME_NOT_ACCEPTED' });
    expect(await value(r2, 'contract')).toBeNull();
    expect(count('_ss_documents')).toBe(1);
    await srv.call('DELETE', `/documents/${String(await value(r1, 'contract'))}`);
  });

  it('maxFileSize: DOCUMENT_FILE_TOO_LARGE, nothing kept', async () => {
    const r = await upload(`/upload/deal/${r1}/contract`, { file: { data: Buffer.alloc(64 * 1024 + 1), type: 'application/pdf' } });
    expectError(asReply(r), { status: 400, code: 'DOCUMENT_FILE_TOO_LARGE', message: /64KB/ });
    expect(count('_ss_files') + count('_ss_documents')).toBe(0);
    expect(blobFiles()).toEqual([]);
  });

  it('the single-file rule: a second upload is DOCUMENT_MULTIPLE_NOT_ALLOWED; multiple attributes collect', async () => {
    const first = await upload(`/upload/deal/${r1}/contract`, { file: { data: 'a', type: 'application/pdf' } });
    expect(first.status).toBe(201);
    expectError(asReply(await upload(`/upload/deal/${r1}/contract`, { file: { data: 'b', type: 'application/pdf' } })), {
      status: 400, code: 'DOCUMENT_MULTIPLE_NOT_ALLOWED',
    });
    const a = await upload(`/upload/deal/${r2}/attachments`, { file: { data: 'one', name: 'one.txt', type: 'text/plain' } });
    const b = await upload(`/upload/deal/${r2}/attachments`, { file: { data: 'two', type: 'text/plain' }, title: 'late', titleAfter: true });
    expect(a.body.data.title).toBe('one.txt');
    expect(b.body.data.title).toBe('late');
    expect(await value(r2, 'attachments')).toEqual([a.body.data.id, b.body.data.id]);
    for (const id of [first.body.data.id, a.body.data.id, b.body.data.id]) await srv.call('DELETE', `/documents/${id}`);
  });

  it('unknown object, record or attribute, and non-document attributes are refused before any byte is kept', async () => {
    expectError(asReply(await upload(`/upload/nope/${r1}/contract`, { file: { data: 'x', type: 'application/pdf' } })), { status: 404, code: 'SCHEMA_OBJECT_NOT_FOUND' });
    expectError(asReply(await upload('/upload/deal/zz/contract', { file: { data: 'x', type: 'application/pdf' } })), { status: 404, code: 'SCHEMA_RECORD_NOT_FOUND' });
    expectError(asReply(await upload(`/upload/deal/${r1}/nope`, { file: { data: 'x', type: 'application/pdf' } })), { status: 404, code: 'SCHEMA_ATTRIBUTE_NOT_FOUND' });
    expectError(asReply(await upload(`/upload/deal/${r1}/title`, { file: { data: 'x' } })), { status: 400, code: 'SCHEMA_VALIDATION_FAILED' });
    expect(count('_ss_files')).toBe(0);
    expect(blobFiles()).toEqual([]);
  });

  it('GET, PATCH title, DELETE a document; unknown ids are 404 DOCUMENT_NOT_FOUND_FOR_OPERATION', async () => {
    const up = await upload(`/upload/deal/${r1}/attachments`, { file: { data: 'doc', type: 'text/plain' } });
    const id = up.body.data.id;
    expect((await srv.call('GET', `/documents/${id}`)).body.data).toEqual(up.body.data);
    const p = await srv.call('PATCH', `/documents/${id}`, { body: { title: 'Renamed' } });
    expect(p.body.data.title).toBe('Renamed');
    expectError(await srv.call('PATCH', `/documents/${id}`, { body: { name: 'x' } }), { status: 400, errors: true });
    expect((await srv.call('DELETE', `/documents/${id}`)).body.data).toEqual({ id });
    expect(await value(r1, 'attachments')).toEqual([]);
    expect(count('_ss_documents') + count('_ss_files')).toBe(0);
    expect(blobFiles()).toEqual([]);
    for (const [m, body] of [['GET', undefined], ['PATCH', { title: 'x' }], ['DELETE', undefined]] as const) {
      expectError(await srv.call(m, `/documents/${id}`, body ? { body } : {}), { status: 404, code: 'DOCUMENT_NOT_FOUND_FOR_OPERATION' });
    }
  });

  it('a custom role cannot take, rename or detach a document of an object it may not update', async () => {
    const owner = { keyId: 'test', role: 'owner', scopes: null } as const;
    if (!(await store.listObjects()).some((o) => o.name === 'vault')) {
      await store.createObject({ name: 'vault', attributes: [{ name: 'docs', type: 'document', multiple: true }] }, { kind: 'runtime' });
    }
    const held = (await store.createRecord('vault', {}, owner)).id;
    const up = await upload(`/upload/vault/${held}/docs`, { file: { data: 'payroll', type: 'text/plain' }, title: 'Payroll' });
    const doc = up.body.data.id as string;
    const role = { name: `dealer_${Date.now()}`, permissions: [{ object: 'deal', actions: ['read', 'create', 'update'] }] };
    expect((await srv.call('POST', '/roles', { body: role })).status).toBe(201);
    const key = (await srv.call('POST', '/keys', { body: { name: 'dealer', role: role.name } })).body.data.secret as string;
    const version = (await store.getRecord('deal', r1)).version;
    for (const r of [
      await srv.call('POST', '/records/deal', { key, body: { attachments: [doc] } }),
      await srv.call('PUT', `/records/deal/${r1}`, { key, body: { attachments: [doc] }, headers: { 'if-match': String(version) } }),
      await srv.call('POST', '/records/deal/bulk-create', { key, body: { records: [{ attachments: [doc] }] } }),
      await srv.call('PATCH', `/documents/${doc}`, { key, body: { title: 'pwned' } }),
      await srv.call('DELETE', `/documents/${doc}`, { key }),
    ]) {
      expectError(r, { status: 403, code: 'SCHEMA_FORBIDDEN' });
      expect(JSON.stringify(r.body)).not.toContain('vault');
    }
    // All as it was: the document on its record, its title, the deal unchanged.
    expect((await srv.call('GET', `/documents/${doc}`)).body.data).toMatchObject({ object: 'vault', recordId: held, attribute: 'docs', title: 'Payroll' });
    expect((await store.getRecord('vault', held)).values['docs']).toEqual([doc]);
    expect((await store.getRecord('deal', r1)).version).toBe(version);
    // A key that may update both objects may still move it (an export imported elsewhere).
    const moved = await srv.call('PUT', `/records/deal/${r1}`, { body: { attachments: [doc] }, headers: { 'if-match': String(version) } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await store.getRecord('vault', held)).values['docs']).toEqual([]);
    await srv.call('DELETE', `/documents/${doc}`);
  });

  it('a file in use by a document cannot be deleted on its own (409)', async () => {
    const up = await upload(`/upload/deal/${r1}/attachments`, { file: { data: 'used', type: 'text/plain' } });
    expectError(await srv.call('DELETE', `/files/${up.body.data.fileId}`), { status: 409, code: 'SCHEMA_CONFLICT' });
    await srv.call('DELETE', `/documents/${up.body.data.id}`);
  });

  it('uploads count in the upload rate bucket (20/min hosted; 2 here), reads do not', async () => {
    // The second server shares the store and must not close it.
    const limited = await startTestServer({ store: { ...srv.store, close: async () => undefined }, dataDir: dir, rateLimit: { limits: { upload: 2 } } });
    await clearOfMinuteEnd();
    try {
      const send = async () => {
        const form = new FormData();
        form.append('file', new Blob(['r']), 'r.txt');
        return fetch(`${limited.base}/files`, { method: 'POST', headers: { authorization: `Bearer ${limited.ownerKey}` }, body: form });
      };
      const first = await send();
      expect(first.status).toBe(201);
      const id = ((await first.json()) as { data: { id: string } }).data.id;
      expect((await send()).status).toBe(201);
      const third = await send();
      expect(third.status).toBe(429);
      expect(await third.json()).toEqual({ success: false, statusCode: 429, message: 'ThrottlerException: Too Many Requests' });
      expect((await limited.call('GET', `/files/${id}`)).status).toBe(200);
      expect((await limited.call('DELETE', `/files/${id}`)).status).toBe(200);
      const rows = db.prepare('SELECT id FROM _ss_files').all() as { id: string }[];
      for (const r of rows) await srv.call('DELETE', `/files/${r.id}`);
    } finally {
      await limited.close();
    }
  });

  it('the routes are in openapi.json', async () => {
    const doc = (await srv.call('GET', '/openapi.json', { key: null })).body;
    for (const p of ['/files', '/files/{id}', '/files/{id}/content', '/upload/{objectName}/{recordId}/{attribute}', '/documents/{id}']) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
  });
});

describe('SDK files and documents (streamed multipart)', () => {
  it('uploads from a path, downloads byte-exact, attaches with a title, reports errors with codes', async () => {
    const { SchemaClient, ServiceRequestError } = await import('../../engine/sdk/index.js');
    const { writeFileSync } = await import('node:fs');
    const client = new SchemaClient({ baseUrl: srv.base, apiKey: srv.ownerKey });
    const data = randomBytes(700_000);
    const path = join(dir, 'upload "q".pdf');
    writeFileSync(path, data);
    const seen: number[] = [];
    const f = await client.files.upload({ path }, { onProgress: (sent) => seen.push(sent) });
    expect(f).toMatchObject({ name: 'upload %22q%22.pdf', mimeType: 'application/pdf', size: data.length, sha256: sha(data) });
    expect(seen[seen.length - 1]).toBe(data.length);
    const res = await client.files.download(f.id);
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    expect((await client.files.rename(f.id, 'x.pdf')).name).toBe('x.pdf');
    await client.files.delete(f.id);
    const gone = await client.files.download(f.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(ServiceRequestError);
    expect((gone as InstanceType<typeof ServiceRequestError>).code).toBe('DOCUMENT_NOT_FOUND_FOR_OPERATION');

    const doc = await client.files.uploadTo({ object: 'deal', recordId: r1, attribute: 'contract' }, { data: Buffer.from('%PDF'), name: 'c.pdf' }, { title: 'Contract' });
    expect(doc).toMatchObject({ title: 'Contract', recordId: r1 });
    expect((await client.documents.update(doc.id, { title: 'T2' })).title).toBe('T2');
    const refused = await client.files
      .uploadTo({ object: 'deal', recordId: r1, attribute: 'contract' }, { data: Buffer.from('%PDF'), name: 'd.pdf' })
      .catch((e: unknown) => e);
    expect((refused as InstanceType<typeof ServiceRequestError>).code).toBe('DOCUMENT_MULTIPLE_NOT_ALLOWED');
    await client.documents.delete(doc.id);
    expect(count('_ss_files') + count('_ss_documents')).toBe(0);
  });
});

describe('schemasync files (the CLI over the SDK; needs npm run build)', () => {
  const cli = (args: string[], cwd = dir) => runCli(srv.base, srv.ownerKey, args, cwd);

  it('upload, get, download (byte-exact, no progress bar off a TTY), rm', async () => {
    const { writeFileSync, readFileSync, existsSync } = await import('node:fs');
    const data = randomBytes(2_500_000);
    writeFileSync(join(dir, 'report.pdf'), data);
    const up = await cli(['--json', 'files', 'upload', 'report.pdf']);
    expect(up.stderr).toBe('');
    expect(up.code).toBe(0);
    const f = JSON.parse(up.stdout) as { id: string; sha256: string; mimeType: string };
    expect(f).toMatchObject({ sha256: sha(data), mimeType: 'application/pdf' });

    const got = await cli(['files', 'get', f.id]);
    expect(got.stdout).toContain(`sha256      ${f.sha256}`);

    const down = await cli(['files', 'download', f.id, '--out', 'copy.pdf']);
    expect(down.code).toBe(0);
    expect(down.stderr).toBe('');
    expect(readFileSync(join(dir, 'copy.pdf')).equals(data)).toBe(true);
    const again = await cli(['files', 'download', f.id, '--out', 'copy.pdf']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/exists; pass --force/);

    const rm = await cli(['files', 'rm', f.id]);
    expect(rm.stdout).toBe(`Deleted file ${f.id}\n`);
    const missing = await cli(['files', 'download', f.id, '--out', 'gone.pdf']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^Error: 404 DOCUMENT_NOT_FOUND_FOR_OPERATION: File .* does not exist\n$/);
    expect(existsSync(join(dir, 'gone.pdf'))).toBe(false);
  });

  it('upload --to attaches; a refusal prints the code and exits 1', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'contract.pdf'), '%PDF-1.4');
    writeFileSync(join(dir, 'notes.txt'), 'hello');
    const ok = await cli(['--json', 'files', 'upload', 'contract.pdf', '--to', `deal/${r1}/contract`, '--title', 'Signed']);
    expect(ok.code).toBe(0);
    const doc = JSON.parse(ok.stdout) as { id: string; title: string };
    expect(doc.title).toBe('Signed');
    expect(await value(r1, 'contract')).toBe(doc.id);

    const bad = await cli(['files', 'upload', 'notes.txt', '--to', `deal/${r2}/contract`]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^Error: 400 DOCUMENT_MIME_NOT_ACCEPTED: deal\.contract does not accept text\/plain/);
    const usage = await cli(['files', 'upload', 'notes.txt', '--to', `deal/${r2}`]);
    expect(usage.stderr).toMatch(/--to must be object\/recordId\/attribute/);
    await srv.call('DELETE', `/documents/${doc.id}`);
  });
});
