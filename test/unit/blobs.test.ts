import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../engine/errors.js';
import { BlobStore } from '../../engine/store/blobs.js';

let dir: string;
let blobs: BlobStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ss-blobs-'));
  blobs = new BlobStore(join(dir, 'files'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Every file under the blob root, temporary ones included. */
function allFiles(root = blobs.root): string[] {
  const out: string[] = [];
  for (const e of readdirSync(root, { withFileTypes: true })) {
    const p = join(root, e.name);
    if (e.isDirectory()) out.push(...allFiles(p));
    else out.push(p);
  }
  return out;
}

/** `count` chunks of 64 KiB, produced lazily; records how many were pulled. */
function chunks(count: number, fill = 7): Readable & { pulled: number } {
  let i = 0;
  const r = new Readable({
    read() {
      if (i >= count) return void this.push(null);
      i++;
      (r as Readable & { pulled: number }).pulled = i;
      this.push(Buffer.alloc(64 * 1024, fill));
    },
  }) as Readable & { pulled: number };
  r.pulled = 0;
  return r;
}

describe('BlobStore', () => {
  it('stores bytes under files/ab/cd/<sha256> and reads them back exactly', async () => {
    const data = Buffer.from('hello, files \u00e9\n');
    const out = await blobs.writeStream(Readable.from([data]), { maxBytes: 1000 });
    const sha = createHash('sha256').update(data).digest('hex');
    expect(out).toEqual({ sha256: sha, size: data.length });
    const path = join(blobs.root, sha.slice(0, 2), sha.slice(2, 4), sha);
    expect(readFileSync(path)).toEqual(data);
    const back: Buffer[] = [];
    for await (const c of blobs.open(sha)) back.push(c as Buffer);
    expect(Buffer.concat(back)).toEqual(data);
  });

  it('keeps one copy for identical content', async () => {
    const a = await blobs.writeStream(Readable.from([Buffer.from('same')]), { maxBytes: 10 });
    const b = await blobs.writeStream(Readable.from([Buffer.from('sa'), Buffer.from('me')]), { maxBytes: 10 });
    expect(b.sha256).toBe(a.sha256);
    expect(allFiles()).toHaveLength(1);
  });

  it('accepts exactly maxBytes and refuses one byte more, leaving no file', async () => {
    await expect(blobs.writeStream(Readable.from([Buffer.alloc(100)]), { maxBytes: 100 })).resolves.toMatchObject({ size: 100 });
    const err = await blobs
      .writeStream(Readable.from([Buffer.alloc(101, 1)]), { maxBytes: 100, tooLargeCode: 'DOCUMENT_FILE_TOO_LARGE' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).code).toBe('DOCUMENT_FILE_TOO_LARGE');
    expect((err as ServiceError).status).toBe(400);
    expect(allFiles()).toHaveLength(1); // only the accepted 100-byte blob
  });

  it('aborts while streaming: stops pulling soon after the limit, default PAYLOAD_TOO_LARGE', async () => {
    const src = chunks(10_000); // 640 MB if read to the end
    const err = await blobs.writeStream(src, { maxBytes: 1024 * 1024 }).catch((e: unknown) => e);
    expect((err as ServiceError).code).toBe('PAYLOAD_TOO_LARGE');
    expect(src.pulled).toBeLessThan(40); // 1 MiB is 16 chunks; a little read-ahead at most
    expect(src.destroyed).toBe(true);
    expect(allFiles()).toEqual([]);
  });

  it('removes the temporary file when the source fails midway', async () => {
    let n = 0;
    const src = new Readable({
      read() {
        n++;
        if (n === 5) this.destroy(new Error('connection reset'));
        else this.push(Buffer.alloc(1024));
      },
    });
    await expect(blobs.writeStream(src, { maxBytes: 1e9 })).rejects.toThrow('connection reset');
    expect(allFiles()).toEqual([]);
  });

  it('removes the temporary file when the source fails before the file is even open', async () => {
    // The write stream opens its file on the thread pool; a source that fails at once (a
    // multipart body with no closing delimiter) ends the pipeline before that open is done.
    // Many at a time, so the opens queue behind each other as they do on a loaded server.
    const failing = () =>
      new Readable({
        read() {
          this.destroy(new Error('unexpected end of form'));
        },
      });
    const settled = await Promise.allSettled(Array.from({ length: 200 }, () => blobs.writeStream(failing(), { maxBytes: 1e9 })));
    expect(settled.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'written'))).toEqual(settled.map(() => 'unexpected end of form'));
    expect(allFiles()).toEqual([]);
  });

  it('release deletes bytes only when nothing references them', async () => {
    const { sha256 } = await blobs.writeStream(Readable.from([Buffer.from('x')]), { maxBytes: 10 });
    expect(blobs.release(sha256, true)).toBe(false);
    expect(blobs.has(sha256)).toBe(true);
    expect(blobs.release(sha256, false)).toBe(true);
    expect(blobs.has(sha256)).toBe(false);
    expect(() => blobs.release(sha256, false)).not.toThrow();
  });

  it('release removes the emptied shard folders, keeps shared ones, and the same content can come back', async () => {
    // Find two contents whose digests share the first shard folder but not the second.
    const digest = (s: string) => createHash('sha256').update(s).digest('hex');
    const first = 'content-0';
    let second = '';
    for (let i = 1; second === ''; i++) {
      const d = digest(`content-${i}`);
      if (d.slice(0, 2) === digest(first).slice(0, 2) && d.slice(2, 4) !== digest(first).slice(2, 4)) second = `content-${i}`;
    }
    const a = await blobs.writeStream(Readable.from([Buffer.from(first)]), { maxBytes: 100 });
    const b = await blobs.writeStream(Readable.from([Buffer.from(second)]), { maxBytes: 100 });
    const ab = join(blobs.root, a.sha256.slice(0, 2));
    blobs.release(a.sha256, false);
    expect(existsSync(join(ab, a.sha256.slice(2, 4)))).toBe(false);
    expect(existsSync(ab)).toBe(true); // still holds b's folder
    blobs.release(b.sha256, false);
    expect(readdirSync(blobs.root)).toEqual([]);
    const again = await blobs.writeStream(Readable.from([Buffer.from(first)]), { maxBytes: 100 });
    expect(readFileSync(blobs.pathOf(again.sha256), 'utf8')).toBe(first);
  });

  it('never builds a path from anything but a digest', () => {
    expect(() => blobs.pathOf('../../etc/passwd')).toThrow(/not a sha256/);
    expect(() => blobs.open('a'.repeat(63) + '/')).toThrow(/not a sha256/);
  });

  it('sweeps temporary leftovers of a crashed write', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(blobs.root, '.tmp-leftover'), 'x');
    const { sha256 } = await blobs.writeStream(Readable.from([Buffer.from('keep')]), { maxBytes: 10 });
    blobs.sweepTemporary();
    expect(existsSync(join(blobs.root, '.tmp-leftover'))).toBe(false);
    expect(blobs.has(sha256)).toBe(true);
  });
});
