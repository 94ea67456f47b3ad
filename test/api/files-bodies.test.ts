import Database from 'better-sqlite3';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, fileEntries, startTestServer, type Reply, type TestServer } from './helpers.js';

/**
 * What a multipart body may carry, over real HTTP on a real server and SQLite file:
 * a body that cannot be parsed is 400 Validation failed (service-interface.md Errors
 * rule 1), never a 500 a client would retry; a title obeys the one title limit PATCH
 * /documents obeys; a file name the one name rule PUT /files obeys. Every refusal keeps
 * nothing: no file row, no document row, no bytes, no temporary file.
 */
let srv: TestServer;
let db: Database.Database;
let dealId: string;

beforeAll(async () => {
  srv = await startTestServer();
  const made = await srv.call('POST', '/schema/objects', {
    body: { name: 'deal', attributes: [{ name: 'atts', type: 'document', multiple: true }] },
  });
  expect(made.status).toBe(201);
  dealId = (await srv.call('POST', '/records/deal', { body: {} })).body.data.id;
  db = new Database(join(srv.dataDir, 'schemasync.db'), { readonly: true });
});
afterAll(async () => {
  db?.close();
  await srv?.close();
});

const rows = (t: '_ss_files' | '_ss_documents') => (db.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n;
const entries = () => fileEntries(srv.dataDir);
async function expectNothingKept(): Promise<void> {
  expect(rows('_ss_files') + rows('_ss_documents')).toBe(0);
  expect(entries()).toEqual([]);
  const deal = (await srv.call('GET', `/records/deal/${dealId}`)).body.data;
  expect(deal.values.atts ?? []).toEqual([]);
}

/** A body sent byte for byte, with the content type given (fetch would fix it up). */
function rawPost(path: string, body: Buffer | string, contentType: string): Promise<Reply> {
  const url = new URL(srv.base + path);
  const data = Buffer.from(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: url.hostname, port: url.port, path: url.pathname, method: 'POST',
      headers: { authorization: `Bearer ${srv.ownerKey}`, 'content-type': contentType, 'content-length': data.length },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: new Headers(res.headers as Record<string, string>), body: text ? JSON.parse(text) : undefined, text }),
      );
    });
    req.on('error', reject);
    req.end(data);
  });
}

interface Part { name: string; data: string | Buffer; filename?: string; type?: string }
function multipart(parts: Part[], boundary = 'ssBOUNDARYbodies'): { body: Buffer; ct: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let h = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) h += `; filename="${p.filename}"`;
    h += '\r\n';
    if (p.type) h += `Content-Type: ${p.type}\r\n`;
    chunks.push(Buffer.from(`${h}\r\n`), Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), ct: `multipart/form-data; boundary=${boundary}` };
}

/**
 * A refused name or title: 400 with `errors` naming the field. JSON Schema's maxLength on
 * PUT/PATCH answers it without a code (Envelope rule 1), the store's check (every rule, and
 * the upload's title) with SCHEMA_VALIDATION_FAILED; both name the field.
 */
function expectFieldRefused(r: Reply, field: string): void {
  expectError(r, { status: 400, code: r.body?.code === undefined ? undefined : 'SCHEMA_VALIDATION_FAILED', errors: true });
  expect(r.body.errors.map((e: { path: unknown }) => e.path)).toEqual([[field]]);
}
const LONE_SURROGATE = /[\ud800-\udfff]/u;

const paths = () => ['/files', `/upload/deal/${dealId}/atts`];
const filePart = (data = 'hello'): Part => ({ name: 'file', filename: 'a.txt', type: 'text/plain', data });

describe('a multipart body that cannot be parsed is 400 Validation failed, nothing kept', () => {
  const cases: [string, string, string][] = [
    ['garbage with a boundary', 'garbage', 'multipart/form-data; boundary=zz'],
    ['no boundary parameter', 'garbage', 'multipart/form-data'],
    ['no closing delimiter', '--zz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello', 'multipart/form-data; boundary=zz'],
    ['a part header without its blank line', '--zz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n', 'multipart/form-data; boundary=zz'],
    ['a file then a truncated part', `--zz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello\r\n--zz\r\nContent-Disp`, 'multipart/form-data; boundary=zz'],
  ];
  for (const [label, body, ct] of cases) {
    it(label, async () => {
      for (const path of paths()) {
        const r = await rawPost(path, body, ct);
        expectError(r, { status: 400, message: 'Validation failed', errors: true });
        expect(r.body.errors[0].path).toEqual([]);
        await expectNothingKept();
      }
    });
  }
  it('a client that disconnects mid-file gets no answer, and nothing is kept', async () => {
    for (const path of paths()) {
      const url = new URL(srv.base + path);
      await new Promise<void>((resolve) => {
        const req = httpRequest({
          host: url.hostname, port: url.port, path: url.pathname, method: 'POST',
          headers: { authorization: `Bearer ${srv.ownerKey}`, 'content-type': 'multipart/form-data; boundary=zz' },
        });
        req.on('error', () => resolve());
        req.on('response', () => resolve());
        req.write('--zz\r\nContent-Disposition: form-data; name="title"\r\n\r\nT\r\n');
        req.write('--zz\r\nContent-Disposition: form-data; name="file"; filename="half.bin"\r\n\r\n');
        req.write(Buffer.alloc(256 * 1024, 1), () => setTimeout(() => { req.destroy(); resolve(); }, 100));
      });
      // The server sees the reset asynchronously.
      for (let i = 0; i < 100 && entries().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
      await expectNothingKept();
    }
  });

  it('and the server keeps answering afterwards', async () => {
    const m = multipart([filePart()]);
    const r = await rawPost('/files', m.body, m.ct);
    expect(r.status).toBe(201);
    await srv.call('DELETE', `/files/${r.body.data.id}`);
    await expectNothingKept();
  });
});

describe('an upload title obeys the PATCH /documents title limit', () => {
  const limit = 500;
  for (const where of ['before', 'after'] as const) {
    it(`a title over ${limit} characters sent ${where} the file is 400 naming title, nothing kept`, async () => {
      for (const length of [limit + 1, 70_000]) {
        const title: Part = { name: 'title', data: 'T'.repeat(length) };
        const m = multipart(where === 'before' ? [title, filePart()] : [filePart(), title]);
        const r = await rawPost(`/upload/deal/${dealId}/atts`, m.body, m.ct);
        expectFieldRefused(r, 'title');
        await expectNothingKept();
      }
    });
  }
  it(`exactly ${limit} characters (counted in code points, as PATCH counts) is kept whole, and PATCH refuses one more`, async () => {
    const title = '😀'.repeat(limit);
    const m = multipart([{ name: 'title', data: title }, filePart()]);
    const r = await rawPost(`/upload/deal/${dealId}/atts`, m.body, m.ct);
    expect(r.status).toBe(201);
    expect(r.body.data.title).toBe(title);
    expect((await srv.call('PATCH', `/documents/${r.body.data.id}`, { body: { title } })).status).toBe(200);
    const p = await srv.call('PATCH', `/documents/${r.body.data.id}`, { body: { title: `${title}x` } });
    expectFieldRefused(p, 'title');
    await srv.call('DELETE', `/documents/${r.body.data.id}`);
    await expectNothingKept();
  });
});

describe('one file name rule for upload and rename', () => {
  async function uploadNamed(filename: string): Promise<Reply> {
    const m = multipart([{ name: 'file', filename, type: 'application/pdf', data: 'y' }]);
    return rawPost('/files', m.body, m.ct);
  }
  const codePoints = (s: string) => [...s].length;

  it('an over-long upload name is cut at a code point boundary to 255, keeping its extension', async () => {
    const r = await uploadNamed(`${'a'.repeat(254)}😀.pdf`);
    expect(r.status).toBe(201);
    const name: string = r.body.data.name;
    expect(name).not.toMatch(LONE_SURROGATE);
    expect(codePoints(name)).toBe(255);
    expect(name).toBe(`${'a'.repeat(251)}.pdf`);
    // Stored as answered (no lone surrogate turned into U+FFFD by SQLite on the way).
    expect((await srv.call('GET', `/files/${r.body.data.id}`)).body.data.name).toBe(name);
    // The name the upload stored is one the rename accepts.
    expect((await srv.call('PUT', `/files/${r.body.data.id}`, { body: { name } })).status).toBe(200);
    await srv.call('DELETE', `/files/${r.body.data.id}`);
  });

  it('a cut that ends on a space is trimmed: the stored name is one PUT /files accepts as is', async () => {
    const r = await uploadNamed(`${'a'.repeat(254)} ${'b'.repeat(5)}`);
    expect(r.body.data.name).toBe('a'.repeat(254));
    expect((await srv.call('PUT', `/files/${r.body.data.id}`, { body: { name: r.body.data.name } })).status).toBe(200);
    await srv.call('DELETE', `/files/${r.body.data.id}`);
  });

  it('the cut never splits a pair, even when the extension cannot be kept', async () => {
    const r = await uploadNamed(`${'😀'.repeat(300)}`);
    expect(r.status).toBe(201);
    expect(r.body.data.name).toBe('😀'.repeat(255));
    await srv.call('DELETE', `/files/${r.body.data.id}`);
  });

  it('control characters are stripped from an upload name, a lone surrogate replaced', async () => {
    // A lone surrogate cannot travel in UTF-8; a client sending its WTF-8 bytes sends ED A0 80.
    const m = multipart([{ name: 'file', filename: 'x\u0007y', type: 'text/plain', data: 'z' }]);
    const bytes = Buffer.concat([m.body.subarray(0, m.body.indexOf('y"')), Buffer.from([0xed, 0xa0, 0x80]), m.body.subarray(m.body.indexOf('y"'))]);
    const r = await rawPost('/files', bytes, m.ct);
    expect(r.status).toBe(201);
    expect(r.body.data.name).not.toMatch(LONE_SURROGATE);
    expect(r.body.data.name).toMatch(/^x\uFFFD+y$/);
    await srv.call('DELETE', `/files/${r.body.data.id}`);
  });

  it('an upload name loses bidirectional overrides, which could disguise its extension', async () => {
    const up = await uploadNamed('invoice\u202efdp.exe');
    expect(up.status).toBe(201);
    expect(up.body.data.name).toBe('invoicefdp.exe');
    await srv.call('DELETE', `/files/${up.body.data.id}`);
  });

  it('PUT /files refuses a lone surrogate, a control character, a bidi override and 256 characters with 400 naming name; the name is unchanged', async () => {
    const up = await uploadNamed('kept.pdf');
    const id = up.body.data.id;
    const refused = ['x\ud800y.txt', 'x\udc00', 'tab\there', 'nul\u0000', 'del\u007f', 'c1\u0085', 'invoice\u202efdp.exe', 'iso\u2066late', 'a'.repeat(256), '😀'.repeat(256)];
    // What an upload's name would lose is refused too, so what PUT stores is what was sent.
    refused.push('reports/2024/q1.txt', 'a\\b.txt', '  padded.txt  ', ' ', '.', '..', '/');
    for (const name of refused) {
      const r = await srv.call('PUT', `/files/${id}`, { body: { name } });
      expectFieldRefused(r, 'name');
      expect((await srv.call('GET', `/files/${id}`)).body.data.name).toBe('kept.pdf');
    }
    // 255 code points of emoji (510 UTF-16 units) is within the limit.
    const ok = await srv.call('PUT', `/files/${id}`, { body: { name: '😀'.repeat(255) } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.name).toBe('😀'.repeat(255));
    await srv.call('DELETE', `/files/${id}`);
    await expectNothingKept();
  });
});
