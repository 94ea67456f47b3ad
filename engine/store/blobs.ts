import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, rmdirSync, rmSync, statSync, type ReadStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ServiceError, type ErrorCode } from '../errors.js';
import { WorkerHasher } from './blob-hasher.js';

/** One hashing thread per process, shared by every blob store (see blob-hasher.ts). */
const hasher = new WorkerHasher();

/**
 * Content-addressed file bytes under `<data>/files/ab/cd/<sha256>` (contract.md §3 "Files
 * and documents": bytes on disk beside the database, never whole in memory; a failed upload
 * leaves no partial file). Identical uploads share one copy. File names are metadata in
 * `_ss_files` only and never reach a path here: the only path input is a hex digest.
 */
export interface BlobWrite {
  sha256: string;
  size: number;
}

export interface WriteOptions {
  /** The largest accepted size in bytes; the write aborts as soon as one byte more arrives. */
  maxBytes: number;
  /** Which refusal the caller wants for an oversize stream (default PAYLOAD_TOO_LARGE). */
  tooLargeCode?: Extract<ErrorCode, 'PAYLOAD_TOO_LARGE' | 'DOCUMENT_FILE_TOO_LARGE'>;
  /** Words for the refusal, e.g. "deal.contract accepts files up to 10MB". */
  tooLargeMessage?: string;
}

const SHA256 = /^[0-9a-f]{64}$/;

export class BlobStore {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
    mkdirSync(root, { recursive: true, mode: 0o700 });
  }

  /** Where the bytes of `sha256` live; refuses anything that is not a hex digest. */
  pathOf(sha256: string): string {
    if (!SHA256.test(sha256)) throw new Error(`not a sha256 digest: ${JSON.stringify(sha256)}`);
    return join(this.root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  has(sha256: string): boolean {
    return existsSync(this.pathOf(sha256));
  }

  size(sha256: string): number {
    return statSync(this.pathOf(sha256)).size;
  }

  /**
   * Stream `input` to a temporary file in the blob folder (same file system, so the final
   * rename is atomic) while hashing and counting. Passing `maxBytes` destroys the pipeline
   * at once — the rest of the upload is never written — and any failure removes the
   * temporary file before the error is rethrown.
   */
  async writeStream(input: Readable, options: WriteOptions): Promise<BlobWrite> {
    const tmp = join(this.root, `.tmp-${randomUUID()}`);
    const hash = hasher.start();
    let size = 0;
    const { maxBytes } = options;
    const meter = new Transform({
      transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
        size += chunk.length;
        if (size > maxBytes) {
          done(
            new ServiceError(
              options.tooLargeCode ?? 'PAYLOAD_TOO_LARGE',
              options.tooLargeMessage ?? `File is larger than the limit of ${maxBytes} bytes`,
            ),
          );
          return;
        }
        const wait = hash.update(chunk);
        if (wait) void wait.then(() => done(null, chunk));
        else done(null, chunk);
      },
    });
    const out = createWriteStream(tmp, { flags: 'wx', mode: 0o600, highWaterMark: 1024 * 1024 });
    try {
      await pipeline(input, meter, out);
      // Some producers (busboy under a size limit) end quietly instead of erroring.
      if ((input as { truncated?: boolean }).truncated) {
        throw new ServiceError(options.tooLargeCode ?? 'PAYLOAD_TOO_LARGE', options.tooLargeMessage ?? 'File is too large');
      }
      const sha256 = await hash.digest();
      await this.moveInto(tmp, this.pathOf(sha256));
      return { sha256, size };
    } catch (err) {
      hash.drop();
      // The file is opened on the thread pool: a source that fails at once (a multipart body
      // with no closing delimiter) ends the pipeline before the open is done, and the stream,
      // destroyed meanwhile, still creates the file before it closes it. Removing it before
      // that close could run ahead of the open and leave it behind.
      // ('close' alone: `once` would settle on the stream's 'error', which comes first.)
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Same content → same name: renaming over an existing copy keeps one copy of the bytes.
   * release() may remove the shard folder between our mkdir and the rename (it prunes
   * empty ones), so a vanished folder is made again and the rename retried.
   */
  private async moveInto(tmp: string, dest: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      mkdirSync(dirname(dest), { recursive: true, mode: 0o700 });
      try {
        await rename(tmp, dest);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 4) throw err;
      }
    }
  }

  /** A read stream of the bytes (the caller sets the content type from the file row). */
  open(sha256: string, range?: { start: number; end: number }): ReadStream {
    return createReadStream(this.pathOf(sha256), range);
  }

  /**
   * Delete the bytes of `sha256` unless something still references them. The caller passes
   * whether a file row still uses the digest (the row count is the store's knowledge).
   * Idempotent: bytes already gone are not an error.
   */
  release(sha256: string, stillReferenced: boolean): boolean {
    if (stillReferenced) return false;
    const path = this.pathOf(sha256);
    rmSync(path, { force: true });
    // Best effort: the now-empty `ab/cd` and `ab` folders go too, so <data>/files does not
    // fill with empty shards. rmdir refuses a folder that is not empty, which is the check.
    for (const dir of [dirname(path), dirname(dirname(path))]) {
      try {
        rmdirSync(dir);
      } catch {
        break;
      }
    }
    return true;
  }

  /** Every stored digest (walks `ab/cd/`; used to collect bytes a crash left without a row). */
  *digests(): Generator<string> {
    for (const a of safeReaddir(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(a)) continue;
      for (const b of safeReaddir(join(this.root, a))) {
        if (!/^[0-9a-f]{2}$/.test(b)) continue;
        for (const name of safeReaddir(join(this.root, a, b))) if (SHA256.test(name)) yield name;
      }
    }
  }

  /** Leftover temporary files of a crashed process (called when the store opens). */
  sweepTemporary(): void {
    // Only our own prefix, never a content file.
    for (const name of safeReaddir(this.root)) if (name.startsWith('.tmp-')) rmSync(join(this.root, name), { force: true });
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
