import { ServiceError } from '../../errors.js';
import type { AttributeSpec } from '../../model/attribute.js';
import { fileNameProblem, titleProblem } from '../../model/file-names.js';
import type { DocumentOut, FileOut, StoredObject } from '../../model/stored.js';
import type { Readable } from 'node:stream';
import type { BlobStore } from '../blobs.js';
import { FileBytes } from './file-bytes.js';
import {
  assertMayChange,
  checkTitle,
  checkUploadSlot,
  DEFAULT_MAX_UPLOAD_BYTES,
  documentAttribute,
  invalidField,
  maxFileSize,
  nonBlank,
  sizeWords,
} from './file-rules.js';
import type { Executor } from '../port.js';
import { readDocumentSlot, writeDocumentSlot, type SlotCodec } from './document-slots.js';
import { Documents } from './documents.js';
import { insertFile, renameFileRow, requireFile, deleteFileRow } from './files.js';
import type { Actor, FilesApi, UploadInput } from '../types.js';

/**
 * The file and document routes' operations (contract.md §3 "Files and documents") over the
 * backend port. An upload streams its bytes to disk first, outside any transaction and
 * outside the connection's queue (a 1 GB upload must not hold other requests), then runs
 * its database part as one store transaction (`driver.transaction`). The row is committed
 * only once its bytes are complete on disk: BlobStore.writeStream has renamed them into
 * place (an atomic rename of a fully written file) before it answers, so a committed row
 * never names missing or partial bytes, however the process ends. Bytes whose row did not
 * commit go (FileBytes.commit).
 */
export interface FilesServiceOptions {
  blobs: BlobStore;
  /** The backend's codec for document values, for the record slot an upload writes. */
  codec: SlotCodec;
  /**
   * One write transaction of the store (engine/store/sql/store.ts: the catalog refreshed for
   * it, the bytes flushed after it), with the catalog to read objects in it.
   */
  transaction: <T>(fn: (tx: Executor, catalog: ObjectReader) => Promise<T>) => Promise<T>;
  /** Reads of the store on one committed state (Driver.snapshot), with the catalog. */
  snapshot: <T>(fn: (ex: Executor, catalog: ObjectReader) => Promise<T>) => Promise<T>;
  /** Where the fate of bytes is read once a transaction has ended: the driver, never a `tx`. */
  driver: Executor;
  maxUploadBytes?: number;
}

/** The catalogue's lookups (engine/store/sql/catalog.ts): SCHEMA_OBJECT_NOT_FOUND from `require`. */
export interface ObjectReader {
  find(ex: Executor, idOrName: string): Promise<StoredObject | undefined>;
  require(ex: Executor, idOrName: string): Promise<StoredObject>;
}

export class FilesService implements FilesApi {
  readonly bytes: FileBytes;
  /** The record store calls its hooks inside its own write transactions (sql/documents.ts). */
  readonly documents: Documents;
  private readonly driver: Executor;
  private readonly codec: SlotCodec;
  private readonly transaction: FilesServiceOptions['transaction'];
  private readonly snapshot: FilesServiceOptions['snapshot'];
  private readonly maxUploadBytes: number;

  constructor(options: FilesServiceOptions) {
    this.driver = options.driver;
    this.codec = options.codec;
    this.transaction = options.transaction;
    this.snapshot = options.snapshot;
    this.maxUploadBytes = options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
    this.bytes = new FileBytes(options.blobs);
    this.documents = new Documents(this.bytes);
  }

  /** Bytes of file rows deleted by a transaction go once it has ended (FileBytes). */
  flush(): Promise<void> {
    return this.bytes.flush(this.driver);
  }

  /** A store write transaction begins / has ended (FileBytes `open`). */
  begin(): number {
    return this.bytes.begin();
  }

  ended(ticket: number): Promise<void> {
    return this.bytes.ended(ticket, this.driver);
  }

  /** The garbage pass at open (FileBytes.collectGarbage); see `collectAtOpen`. */
  collectGarbage(): Promise<number> {
    return this.bytes.collectGarbage(this.driver);
  }

  /** Settles once the garbage pass the store started on open has run; every files call waits for it. */
  private ready: Promise<unknown> = Promise.resolve();

  /**
   * Start the garbage pass when the store opens, once its setup (`setUp`, which creates the
   * tables) has run. Every files call waits for it, so no upload writes bytes while the pass
   * compares the blob folder with the file rows (it ran in the constructor, before anything
   * else, when opening was synchronous). A failed pass is reported and leaves the bytes as
   * they are; a failed setup is every store call's error, not this pass's.
   */
  collectAtOpen(setUp: Promise<unknown>, notice: (line: string) => void): Promise<unknown> {
    this.ready = setUp.then(
      () =>
        this.collectGarbage().catch((err: unknown) => {
          notice(`schemasync: leftover file bytes were not collected: ${err instanceof Error ? err.message : String(err)}`);
        }),
      () => undefined,
    );
    return this.ready;
  }

  // ---------------------------------------------------------------- files

  /** POST /files: stream to disk under the server cap (413 PAYLOAD_TOO_LARGE), then one row. */
  async uploadFile(input: UploadInput, actor: Actor): Promise<FileOut> {
    await this.ready;
    const written = await this.bytes.write(input.stream, { maxBytes: this.maxUploadBytes, tooLargeCode: 'PAYLOAD_TOO_LARGE' });
    return this.bytes.commit(written.sha256, this.driver, async () => {
      await input.untilBodyEnds?.();
      return this.transaction((tx) => insertFile(tx, written, input, actor));
    });
  }

  async getFile(id: string): Promise<FileOut> {
    await this.ready;
    return this.snapshot((ex) => requireFile(ex, id));
  }

  /** The bytes with what GET /files/:id/content needs to describe them. */
  async openFile(id: string): Promise<{ file: FileOut; stream: Readable }> {
    const file = await this.getFile(id);
    return { file, stream: this.bytes.blobs.open(file.sha256) };
  }

  /**
   * PUT /files/:id: the same ownership rule as delete (a member renames only their own
   * uploads). A name sent on purpose is refused, not cleaned, when it breaks the name rule.
   */
  async renameFile(id: string, name: string, actor: Actor): Promise<FileOut> {
    const problem = fileNameProblem(name);
    if (problem) throw invalidField('name', problem);
    await this.ready;
    return this.transaction(async (tx) => {
      const file = await requireFile(tx, id);
      assertMayChange(file, actor, 'rename');
      await renameFileRow(tx, id, name);
      return { ...file, name };
    });
  }

  /**
   * DELETE /files/:id. Someone else's upload → SCHEMA_ACCESS_DENIED (500, masked;
   * service-interface.md error table); owners and admins may delete any file. A file that
   * documents still use is refused (409) rather than leaving records pointing at nothing.
   *
   * Invariant (a file a document references is never deleted): the check and the delete
   * share one transaction, and a file gains a document only in its own upload's transaction
   * (a document is created with the file it was uploaded as; moves never change its file),
   * so no interleaving write can add a reference the check missed. The documents table's
   * foreign key to `_ss_files` backs it up on every backend.
   */
  async deleteFile(id: string, actor: Actor): Promise<{ id: string }> {
    await this.ready;
    const sha = await this.transaction(async (tx) => {
      const file = await requireFile(tx, id);
      assertMayChange(file, actor, 'delete');
      const used = await this.documents.usersOfFile(tx, id, 5);
      if (used.length > 0) {
        throw new ServiceError('SCHEMA_CONFLICT', `File ${id} is used by document ${used.join(', ')}; delete the document first`, {
          fix: 'DELETE /documents/:id (or clear the record attribute) and then delete the file',
        });
      }
      await deleteFileRow(tx, id);
      return file.sha256;
    });
    this.bytes.release(sha);
    await this.flush();
    return { id };
  }

  // ---------------------------------------------------------------- documents

  async getDocument(id: string): Promise<DocumentOut> {
    await this.ready;
    return this.snapshot((ex) => this.documents.require(ex, id));
  }

  async renameDocument(id: string, title: string, authorize?: (doc: DocumentOut) => void): Promise<DocumentOut> {
    const problem = titleProblem(title);
    if (problem) throw invalidField('title', problem);
    await this.ready;
    return this.transaction(async (tx) => {
      const doc = await this.documents.require(tx, id);
      authorize?.(doc);
      await this.documents.setTitle(tx, id, title);
      return { ...doc, title };
    });
  }

  /** DELETE /documents/:id: the id leaves its record's value in the same transaction. */
  async deleteDocument(id: string, _actor: Actor): Promise<{ id: string }> {
    await this.ready;
    // Its bytes go when the transaction has ended (store.ts write: FileBytes `ended`).
    await this.transaction(async (tx, catalog) => {
      const doc = await this.documents.require(tx, id);
      const o = await catalog.find(tx, doc.object);
      if (o) {
        const spec = documentAttribute(o, doc.attribute);
        const held = await readDocumentSlot(tx, o, doc.recordId, spec, this.codec);
        // The record may be gone; whether or not it was there, no row remains.
        if (held) await writeDocumentSlot(tx, o, doc.recordId, spec, held.filter((d) => d !== id), this.codec);
      }
      await this.documents.delete(tx, [id]);
    });
    return { id };
  }

  /**
   * POST /upload/:objectName/:recordId/:attribute: cheap checks first (attribute type,
   * record, single-file, accepts — all known before a byte is read), then the bytes under
   * the attribute's maxFileSize, then the file row, the document row and the record's new
   * value in one transaction. Any refusal leaves no bytes and no row.
   */
  async uploadDocument(
    target: { object: string; recordId: string; attribute: string },
    input: UploadInput & { title?: string | undefined },
    actor: Actor,
  ): Promise<DocumentOut> {
    checkTitle(input.title);
    await this.ready;
    const { spec } = await this.snapshot((ex, catalog) => this.checkSlot(ex, catalog, target, input.mimeType));
    const max = maxFileSize(spec);
    const written = await this.bytes.write(input.stream, {
      maxBytes: max,
      tooLargeCode: 'DOCUMENT_FILE_TOO_LARGE',
      tooLargeMessage: `${target.object}.${target.attribute} accepts files up to ${sizeWords(max)}`,
    });
    return this.bytes.commit(written.sha256, this.driver, async () => {
      const late = await input.untilBodyEnds?.();
      checkTitle(late?.title);
      return this.transaction(async (tx, catalog) => {
        // Re-checked inside the transaction: another upload may have filled the slot meanwhile.
        const slot = await this.checkSlot(tx, catalog, target, input.mimeType);
        const file = await insertFile(tx, written, input, actor);
        // A title sent after the file part wins over one sent before it, as it would in a form.
        const title = nonBlank(late?.title) ?? nonBlank(input.title) ?? file.name;
        // The object's name, however the path named it (an id too): slots are kept by name.
        const doc = await this.documents.insert(tx, { title, fileId: file.id, object: slot.o.name, recordId: target.recordId, attribute: target.attribute });
        const ids = slot.spec.multiple ? [...slot.held, doc.id] : [doc.id];
        await writeDocumentSlot(tx, slot.o, target.recordId, slot.spec, ids, this.codec);
        return doc;
      });
    });
  }

  // ---------------------------------------------------------------- internals

  private async checkSlot(
    ex: Executor,
    catalog: ObjectReader,
    target: { object: string; recordId: string; attribute: string },
    mimeType: string | undefined,
  ): Promise<{ o: StoredObject; spec: AttributeSpec; held: string[] }> {
    const o = await catalog.require(ex, target.object);
    const spec = documentAttribute(o, target.attribute);
    const held = await readDocumentSlot(ex, o, target.recordId, spec, this.codec);
    // The record store's SCHEMA_RECORD_NOT_FOUND, as GET /records/:object/:id answers it.
    if (!held) throw new ServiceError('SCHEMA_RECORD_NOT_FOUND', `Record ${target.recordId} of "${o.name}" does not exist`);
    checkUploadSlot(target.object, spec, held, mimeType);
    return { o, spec, held };
  }
}
