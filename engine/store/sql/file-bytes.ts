import type { Readable } from 'node:stream';
import type { BlobStore, BlobWrite, WriteOptions } from '../blobs.js';
import type { Executor } from '../port.js';
import { digestInUse, usedDigests } from './files.js';

/**
 * When file bytes may go (contract.md §3: "an upload that fails leaves no partial file and
 * no row"; identical uploads share one copy). The bytes of a digest are deleted only when
 * no committed file row uses it and no upload holding it is still on its way to a row.
 *
 * - `inFlight`: digests written to disk whose row is not committed yet. A failed upload of
 *   the same content must not delete bytes a concurrent upload is about to reference.
 * - `candidates`: digests whose last row may have gone inside a transaction. Deciding
 *   inside it could delete bytes a rollback brings back a row for, so `flush` decides
 *   after the transaction has ended, reading through the driver (never a transaction
 *   handle), which sees committed rows only.
 * - `open`: write transactions begun and not yet ended (`begin`/`ended`, store.ts `write`).
 *   On PostgreSQL two transactions can each delete a row of the same digest at once (two
 *   documents of identical bytes). The first to end reads the digest still used (the other's
 *   delete is not committed) and must not forget it: a digest found in use while others are
 *   open waits for exactly those (a row deleted by a transaction begun later is that one's
 *   own release), and is read again when the last of them has ended — one read, not one per
 *   flush while the server stays busy. A digest found in use with none open is used by a
 *   committed row and leaves the list. The last transaction to end reads every delete
 *   committed. (On SQLite the read waits in the connection's queue behind any running
 *   transaction, sqlite/driver.ts, so the first read already sees the last state.)
 * - `writtenDuringReads`: a read may begin before an upload of the same bytes commits its row
 *   and answer after the upload left `inFlight`; such a digest is kept and read again.
 *
 * Keeping bytes is the only effect of a stale read: bytes go only when a read after the
 * deleting transaction's end finds no row and no upload.
 */
export class FileBytes {
  private readonly inFlight = new Map<string, number>();
  /**
   * Digests an upload wrote while a flush was reading (kept while any read is under way). A
   * read that began before such an upload's row committed can find no row, and by the time it
   * answers the upload may have committed and left `inFlight`: neither says the bytes are used.
   */
  private readonly writtenDuringReads = new Set<string>();
  private reads = 0;
  /** Digest → the transactions to wait for before reading it again (none: read at the next flush). */
  private readonly candidates = new Map<string, ReadonlySet<number> | undefined>();
  private readonly open = new Set<number>();
  private lastTransaction = 0;

  constructor(readonly blobs: BlobStore) {}

  /** Stream to disk outside any transaction: a 1 GB upload holds no lock and no queue. */
  async write(stream: Readable, options: WriteOptions): Promise<BlobWrite> {
    const written = await this.blobs.writeStream(stream, options);
    this.inFlight.set(written.sha256, (this.inFlight.get(written.sha256) ?? 0) + 1);
    if (this.reads > 0) this.writtenDuringReads.add(written.sha256);
    return written;
  }

  /**
   * The database part of an upload whose bytes are on disk: `fn` commits the row or throws.
   * Refused after the bytes landed, they go unless another row shares them.
   */
  async commit<T>(sha256: string, driver: Executor, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      this.release(sha256);
      throw err;
    } finally {
      const n = (this.inFlight.get(sha256) ?? 1) - 1;
      if (n <= 0) this.inFlight.delete(sha256);
      else this.inFlight.set(sha256, n);
      await this.flush(driver);
    }
  }

  /** A file row went (or may have) inside a transaction: decide about its bytes at `flush`. */
  release(sha256: string): void {
    this.candidates.set(sha256, undefined);
  }

  /** A write transaction begins; its ticket goes to `ended`. */
  begin(): number {
    const ticket = ++this.lastTransaction;
    this.open.add(ticket);
    return ticket;
  }

  /** The transaction of `ticket` has ended (committed or rolled back): decide what it released. */
  async ended(ticket: number, driver: Executor): Promise<void> {
    this.open.delete(ticket);
    await this.flush(driver);
  }

  /** Decide the candidates now: call only when no transaction of this caller is running. */
  async flush(driver: Executor): Promise<void> {
    // The list is taken synchronously, so a transaction that ends meanwhile sees its own releases.
    for (const [sha, waiting] of [...this.candidates]) {
      if (waiting && [...waiting].some((t) => this.open.has(t))) continue;
      this.reads++;
      let read: boolean;
      try {
        read = await digestInUse(driver, sha);
      } finally {
        this.reads--;
      }
      const raced = this.writtenDuringReads.has(sha);
      if (this.reads === 0) this.writtenDuringReads.clear();
      const used = read || (this.inFlight.get(sha) ?? 0) > 0 || raced;
      if (!used) {
        this.blobs.release(sha, false);
        this.candidates.delete(sha);
      } else if (raced && !read) {
        // An upload of these bytes landed while this read ran: its row may be committed now,
        // unseen by the read. Read again at the next flush (its own, or a later write's).
        this.candidates.set(sha, undefined);
      } else if (this.open.size === 0) {
        this.candidates.delete(sha);
      } else {
        // Read as used while these were open: one of them may be deleting its last row.
        this.candidates.set(sha, new Set(this.open));
      }
    }
  }

  /**
   * At open: temporary files of interrupted uploads, and bytes whose row never committed
   * (a crash between the rename and the insert), are removed, so a refused or failed upload
   * leaves nothing even across a crash (contract.md §3). Started before the store serves
   * anything, so its read is the first in the connection's queue; a digest that an upload
   * has written since is in flight and kept.
   */
  async collectGarbage(driver: Executor): Promise<number> {
    this.blobs.sweepTemporary();
    const used = await usedDigests(driver);
    let removed = 0;
    for (const sha of [...this.blobs.digests()]) {
      if (!used.has(sha) && !this.inFlight.has(sha) && this.blobs.release(sha, false)) removed++;
    }
    return removed;
  }
}
