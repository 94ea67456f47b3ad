import { intColumn } from '../sql/rows.js';
import type BetterSqlite3 from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ServiceError, type FieldError } from '../../errors.js';
import { DEFAULT_MAX_FILE_SIZE, type AttributeSpec } from '../../model/attribute.js';
import { cleanFileName, fileNameProblem, titleProblem } from '../../model/file-names.js';
import type { DocumentOut, FileOut, RecordOut, StoredObject } from '../../model/stored.js';
import type { BlobStore } from '../blobs.js';
import { FILES_SQL, writeTransaction } from './database.js';
import type { DocumentSlot, RecordPort } from '../sql/context.js';
import type { Actor } from '../types.js';

/**
 * Files and documents (contract.md §3 "Files and documents", issue 5).
 *
 * - A file is uploaded bytes plus metadata (`_ss_files`); its bytes live in the BlobStore,
 *   keyed by sha256, so identical uploads share one copy and bytes go only when no file
 *   row uses the digest any more.
 * - A document (`_ss_documents`) is a titled use of a file in one slot: one record's
 *   document attribute. A record's value for that attribute is its document id(s).
 *   Documents are owned by their slot: detaching one from the record's value, deleting the
 *   record, or dropping the attribute deletes the document row, and with the last document
 *   of a file the file row too (uploads to a slot create their file for it). Naming a
 *   document of another record in a record write moves it (see applyDocumentValues).
 *
 * Every write here is one SQLite write transaction (BEGIN IMMEDIATE, see writeTransaction;
 * nested ones become savepoints of the store's, so the store can call these inside its own
 * record writes).
 */
export type Db = BetterSqlite3.Database;

export type { FileOut, DocumentOut } from '../../model/stored.js';

/**
 * The few record operations files need (engine/store/sql/context.ts), always bound to the
 * transaction the documents work runs in: the store hands its transaction-bound self.
 */
export type { RecordPort } from '../sql/context.js';
/** Runs a write with the record side bound to it (the store's `transaction`). */
export type RecordTransaction = <T>(fn: (records: RecordPort) => Promise<T>) => Promise<T>;

export interface UploadInput {
  /** The name the client gave; kept as metadata only (never a path). */
  name: string | undefined;
  mimeType: string | undefined;
  stream: Readable;
  /**
   * Awaited once the bytes are on disk and before anything is committed. The HTTP route
   * reads the rest of the multipart body here: a refusal found after the file part (a
   * second file) must leave no row and no bytes (contract.md §3, issue 5), and a `title`
   * sent after the file part is known before the document row is written.
   */
  untilBodyEnds?: () => Promise<{ title?: string | undefined }>;
}

/** Who moves a document between records when the record write names no actor. */
const SYSTEM_ACTOR: Actor = { keyId: 'system', role: 'owner', scopes: null };

/** POST /files has no attribute to limit it; a server-wide cap keeps the disk safe. */
export const DEFAULT_MAX_UPLOAD_BYTES = 1024 * 1024 * 1024;


interface FileRow {
  id: string;
  name: string;
  mime_type: string;
  size: number;
  sha256: string;
  uploaded_by: string | null;
  created_at: string;
}

interface DocumentRow {
  id: string;
  title: string;
  file_id: string;
  object: string;
  record_id: string;
  attribute: string;
  created_at: string;
}

const toFile = (r: FileRow): FileOut => ({
  id: r.id,
  name: r.name,
  mimeType: r.mime_type,
  size: r.size,
  sha256: r.sha256,
  uploadedBy: r.uploaded_by,
  createdAt: r.created_at,
});

const toDocument = (r: DocumentRow): DocumentOut => ({
  id: r.id,
  title: r.title,
  fileId: r.file_id,
  object: r.object,
  recordId: r.record_id,
  attribute: r.attribute,
  createdAt: r.created_at,
});

/** `type/subtype` lower-cased without parameters; anything unparsable is octet-stream. */
export function normalizeMime(mime: string | undefined): string {
  const essence = (mime ?? '').split(';')[0]!.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(essence) ? essence : 'application/octet-stream';
}

/** contract.md §3: `accepts` entries match exactly or by `type/*` wildcard. */
export function mimeAccepted(mime: string, accepts: readonly string[] | undefined): boolean {
  if (!accepts || accepts.length === 0) return true;
  const m = normalizeMime(mime);
  return accepts.some((a) => {
    const want = a.trim().toLowerCase();
    if (want === '*/*') return true;
    if (want.endsWith('/*')) return m.startsWith(want.slice(0, -1));
    return m === want;
  });
}

/** The name rule lives in the model (one definition for routes and store); re-exported for callers of the store. */
export { cleanFileName };

/** A name or title refused: 400 naming the field (service-interface.md Errors rule 2). */
function invalidField(field: string, problem: string): ServiceError {
  return new ServiceError('SCHEMA_VALIDATION_FAILED', problem, { errors: [{ path: [field], message: problem }] });
}

function fileNotFound(id: string): ServiceError {
  // The spec names no file-specific code; the document code is its "target does not exist".
  return new ServiceError('DOCUMENT_NOT_FOUND_FOR_OPERATION', `File ${id} does not exist`);
}

function documentNotFound(id: string): ServiceError {
  return new ServiceError('DOCUMENT_NOT_FOUND_FOR_OPERATION', `Document ${id} does not exist`);
}

function sizeWords(bytes: number): string {
  for (const [unit, n] of [['GB', 1024 ** 3], ['MB', 1024 ** 2], ['KB', 1024]] as const) {
    if (bytes >= n && bytes % n === 0) return `${bytes / n}${unit}`;
  }
  return `${bytes} bytes`;
}

/** An upload's `title` field obeys PATCH /documents' rule; refused before anything is kept. */
function checkTitle(title: string | undefined): void {
  const problem = title === undefined ? null : titleProblem(title);
  if (problem) throw invalidField('title', problem);
}

function nonBlank(s: string | undefined): string | undefined {
  return s !== undefined && s.trim() !== '' ? s : undefined;
}

/**
 * service-interface.md error table: changing someone else's upload is SCHEMA_ACCESS_DENIED
 * (500, masked); owners and admins may change any file. Rename and delete share the rule.
 */
function assertMayChange(file: FileOut, actor: Actor, verb: 'rename' | 'delete'): void {
  const privileged = actor.role === 'owner' || actor.role === 'admin';
  if (!privileged && file.uploadedBy !== actor.keyId) {
    throw new ServiceError('SCHEMA_ACCESS_DENIED', `Key ${actor.keyId} may not ${verb} file ${file.id}, uploaded by ${file.uploadedBy ?? 'unknown'}`);
  }
}

/** One document attribute of one record, with the value a record write gives it. */
export type { DocumentSlot } from '../sql/context.js';

/** `records[1].values.atts` for an error message naming another place of the same request. */
function pathText(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The ids of a document value as stored in a record (one id, a list, or nothing). */
export function documentIds(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return typeof value === 'string' ? [value] : [];
}

export class FilesEngine {
  private readonly db: Db;
  private readonly blobs: BlobStore;
  private transaction: RecordTransaction;
  private readonly maxUploadBytes: number;
  /**
   * Digests written to disk whose row is not inserted yet. A failed upload of the same
   * content must not delete bytes a concurrent upload is about to reference.
   */
  private readonly inFlight = new Map<string, number>();
  /** Digests whose last row may have gone inside a transaction not yet committed. */
  private readonly releaseCandidates = new Set<string>();

  /** Runs an upload's database part in the connection's queue (engine/store/sqlite/driver.ts). */
  private readonly serial: <T>(fn: () => T) => Promise<T>;

  /**
   * `records`: the record side for a FilesEngine used on its own (tests); a store attaches
   * its own transaction instead (`attach`), so every record call runs in the write's transaction.
   */
  constructor(db: Db, blobs: BlobStore, records: RecordPort | undefined, options: { maxUploadBytes?: number; serial?: <T>(fn: () => T) => Promise<T> } = {}) {
    this.db = db;
    this.serial = options.serial ?? (async (fn) => fn());
    this.blobs = blobs;
    this.transaction = async (fn) => {
      if (!records) throw new Error('FilesEngine: no record side attached');
      // On its own: one BEGIN IMMEDIATE … COMMIT around the awaited work (no other user of the connection).
      db.exec('BEGIN IMMEDIATE');
      try {
        const out = await fn(records);
        db.exec('COMMIT');
        return out;
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw err;
      }
    };
    this.maxUploadBytes = options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
    db.exec(FILES_SQL);
    this.collectGarbage();
  }

  attach(transaction: RecordTransaction): void {
    this.transaction = transaction;
  }

  /**
   * At open: temporary files of interrupted uploads, and bytes whose row never committed
   * (a crash between the rename and the insert), are removed, so a refused or failed upload
   * leaves nothing even across a crash (contract.md §3).
   */
  collectGarbage(): number {
    this.blobs.sweepTemporary();
    const used = this.db.prepare('SELECT 1 FROM _ss_files WHERE sha256 = ? LIMIT 1');
    let removed = 0;
    for (const sha of [...this.blobs.digests()]) {
      if (!used.get(sha) && !this.inFlight.has(sha) && this.blobs.release(sha, false)) removed++;
    }
    return removed;
  }

  // ---------------------------------------------------------------- files

  /** POST /files: stream to disk under the server cap (413 PAYLOAD_TOO_LARGE), then one row. */
  async uploadFile(input: UploadInput, actor: Actor): Promise<FileOut> {
    const written = await this.writeBytes(input.stream, { maxBytes: this.maxUploadBytes, tooLargeCode: 'PAYLOAD_TOO_LARGE' });
    return this.afterBytes(written.sha256, async () => {
      await input.untilBodyEnds?.();
      return this.serial(() => writeTransaction(this.db, () => this.insertFile(written, input, actor)));
    });
  }

  /**
   * The database part of an upload whose bytes are on disk. Refused after the bytes landed:
   * they go unless another row shares them.
   */
  private async afterBytes<T>(sha256: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      this.releaseCandidates.add(sha256);
      throw err;
    } finally {
      this.doneWriting(sha256);
      this.flushReleases();
    }
  }

  getFile(id: string): FileOut {
    const row = this.db.prepare('SELECT * FROM _ss_files WHERE id = ?').get(id) as FileRow | undefined;
    if (!row) throw fileNotFound(id);
    return toFile(row);
  }

  /** The bytes with what GET /files/:id/content needs to describe them. */
  openFile(id: string): { file: FileOut; stream: Readable } {
    const file = this.getFile(id);
    return { file, stream: this.blobs.open(file.sha256) };
  }

  /**
   * PUT /files/:id: the same ownership rule as delete (a member renames only their own
   * uploads). A name sent on purpose is refused, not cleaned, when it breaks the name rule.
   */
  renameFile(id: string, name: string, actor: Actor): FileOut {
    const problem = fileNameProblem(name);
    if (problem) throw invalidField('name', problem);
    return writeTransaction(this.db, () => {
      assertMayChange(this.getFile(id), actor, 'rename');
      this.db.prepare('UPDATE _ss_files SET name = ? WHERE id = ?').run(name, id);
      return this.getFile(id);
    });
  }

  /**
   * DELETE /files/:id. Someone else's upload → SCHEMA_ACCESS_DENIED (500, masked;
   * service-interface.md error table); owners and admins may delete any file. A file that
   * documents still use is refused (409) rather than leaving records pointing at nothing.
   */
  deleteFile(id: string, actor: Actor): { id: string } {
    const sha = writeTransaction(this.db, () => {
      const file = this.getFile(id);
      assertMayChange(file, actor, 'delete');
      const used = this.db.prepare('SELECT id FROM _ss_documents WHERE file_id = ? LIMIT 5').all(id) as { id: string }[];
      if (used.length > 0) {
        throw new ServiceError('SCHEMA_CONFLICT', `File ${id} is used by document ${used.map((d) => d.id).join(', ')}; delete the document first`, {
          fix: 'DELETE /documents/:id (or clear the record attribute) and then delete the file',
        });
      }
      this.db.prepare('DELETE FROM _ss_files WHERE id = ?').run(id);
      return file.sha256;
    });
    this.releaseCandidates.add(sha);
    this.flushReleases();
    return { id };
  }

  // ---------------------------------------------------------------- documents

  getDocument(id: string): DocumentOut {
    const row = this.db.prepare('SELECT * FROM _ss_documents WHERE id = ?').get(id) as DocumentRow | undefined;
    if (!row) throw documentNotFound(id);
    return toDocument(row);
  }

  renameDocument(id: string, title: string): DocumentOut {
    const problem = titleProblem(title);
    if (problem) throw invalidField('title', problem);
    return writeTransaction(this.db, () => {
      this.getDocument(id);
      this.db.prepare('UPDATE _ss_documents SET title = ? WHERE id = ?').run(title, id);
      return this.getDocument(id);
    });
  }

  /** DELETE /documents/:id: the id leaves its record's value in the same transaction. */
  async deleteDocument(id: string, actor: Actor): Promise<{ id: string }> {
    await this.transaction(async (records) => {
      const doc = this.getDocument(id);
      const record = await tryGetRecord(records, doc.object, doc.recordId);
      if (record) {
        const spec = await documentAttribute(records, doc.object, doc.attribute);
        const remaining = documentIds(record.values[doc.attribute]).filter((d) => d !== id);
        // updateRecord runs the store's document hook, which deletes the detached row.
        await records.updateRecord(doc.object, doc.recordId, { [doc.attribute]: spec.multiple ? remaining : (remaining[0] ?? null) }, '*', actor);
      }
      // Whether or not the hook ran (the record may be gone), no row remains.
      this.deleteDocumentRows([id]);
    });
    this.flushReleases();
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
    // A first check before a byte is read; the transaction below checks again.
    const spec = await this.transaction((records) => checkSlot(records, target, input.mimeType));
    const max = spec.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
    const written = await this.writeBytes(input.stream, {
      maxBytes: max,
      tooLargeCode: 'DOCUMENT_FILE_TOO_LARGE',
      tooLargeMessage: `${target.object}.${target.attribute} accepts files up to ${sizeWords(max)}`,
    });
    return this.afterBytes(written.sha256, async () => {
      const late = await input.untilBodyEnds?.();
      checkTitle(late?.title);
      const doc = await this.transaction(async (records) => {
        // Re-checked inside the transaction: another upload may have filled the slot meanwhile.
        await checkSlot(records, target, input.mimeType);
        const file = this.insertFile(written, input, actor);
        const id = randomUUID();
        // A title sent after the file part wins over one sent before it, as it would in a form.
        const title = nonBlank(late?.title) ?? nonBlank(input.title) ?? file.name;
        this.db
          .prepare('INSERT INTO _ss_documents (id, title, file_id, object, record_id, attribute, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
          .run(id, title, file.id, target.object, target.recordId, target.attribute, new Date().toISOString());
        const current = documentIds((await records.getRecord(target.object, target.recordId)).values[target.attribute]);
        await records.updateRecord(target.object, target.recordId, { [target.attribute]: spec.multiple ? [...current, id] : id }, '*', actor);
        return this.getDocument(id);
      });
      return doc;
    });
  }

  // ------------------------------------------------ hooks the record store calls

  /** One slot's value in a record write; `applyDocumentValues` takes every slot of one write. */
  applyDocumentValue(
    records: RecordPort,
    object: string,
    recordId: string,
    spec: AttributeSpec,
    value: unknown,
    path: (string | number)[] = [spec.name],
    actor?: Actor,
  ): Promise<FieldError[]> {
    return this.applyDocumentValues(records, object, [{ recordId, spec, value, path }], actor);
  }

  /**
   * The store's `checkDocumentValues` hook, run inside its record-write transaction once
   * for the whole write (one record or a batch) after its rows are written (contract.md §3:
   * "Document values are document ids"; issue 5: record create/update accept existing
   * document ids with the upload rules). Each id must name an existing document whose file
   * passes the attribute's accepts and maxFileSize; at most one id unless `multiple`.
   *
   * A document lives in one slot (record × attribute), so one id named by two slots of the
   * write is refused at the later one: applied one after the other, the second slot would
   * take the document from the first, leaving the first record's answered value wrong and
   * — with the other record's value emptied behind the document's back — the next write to
   * its slot deleting the document and its bytes.
   *
   * An id attached to another record moves here and leaves that record's value (that record
   * is updated as `actor`, its version bumped) unless its value no longer names it (a record
   * of this write that dropped it). Every move happens before any slot lets go of the
   * documents it no longer names (deleted: no orphan rows), so a batch that empties C and
   * gives C's document to B moves it in either item order. Existence/ownership problems
   * come back as per-field errors so the store reports every bad attribute at once;
   * DOCUMENT_* refusals throw with their own codes.
   */
  async applyDocumentValues(records: RecordPort, object: string, slots: readonly DocumentSlot[], actor?: Actor): Promise<FieldError[]> {
    const errors: FieldError[] = [];
    const moves: { row: DocumentRow; recordId: string; attribute: string }[] = [];
    const namedAt = new Map<string, (string | number)[]>();
    const get = this.db.prepare(
      'SELECT d.*, f.mime_type, f.size FROM _ss_documents d JOIN _ss_files f ON f.id = d.file_id WHERE d.id = ?',
    );
    const bind = this.db.prepare('UPDATE _ss_documents SET object = ?, record_id = ?, attribute = ? WHERE id = ?');
    for (const { recordId, spec, value, path } of slots) {
      const ids = documentIds(value);
      if (!spec.multiple && ids.length > 1) {
        throw new ServiceError('DOCUMENT_MULTIPLE_NOT_ALLOWED', `${object}.${spec.name} takes a single file`);
      }
      for (const id of ids) {
        const first = namedAt.get(id);
        if (first) {
          errors.push({ path, message: `document ${id} is already named at ${pathText(first)}; a document belongs to one record's attribute` });
          continue;
        }
        namedAt.set(id, path);
        const row = get.get(id) as (DocumentRow & { mime_type: string; size: number }) | undefined;
        if (!row) {
          errors.push({ path, message: `document ${id} does not exist` });
          continue;
        }
        const here = row.object === object && row.record_id === recordId;
        if (here && row.attribute !== spec.name) {
          errors.push({ path, message: `document ${id} is already attached to ${row.attribute} of this record` });
          continue;
        }
        if (!mimeAccepted(row.mime_type, spec.accepts)) {
          throw new ServiceError('DOCUMENT_MIME_NOT_ACCEPTED', `${object}.${spec.name} does not accept ${row.mime_type} (accepts ${spec.accepts?.join(', ')})`);
        }
        const max = spec.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
        if (row.size > max) {
          throw new ServiceError('DOCUMENT_FILE_TOO_LARGE', `${object}.${spec.name} accepts files up to ${sizeWords(max)}`);
        }
        if (!here) moves.push({ row, recordId, attribute: spec.name });
      }
    }
    if (errors.length > 0) return errors;
    for (const { row, recordId, attribute } of moves) {
      // Rebind first, so the old record's own hook run (below) no longer counts it as its
      // document and so does not delete it.
      bind.run(object, recordId, attribute, row.id);
      const old = await tryGetRecord(records, row.object, row.record_id);
      const held = old ? documentIds(old.values[row.attribute]) : [];
      if (old && held.includes(row.id)) {
        const oldSpec = await documentAttribute(records, row.object, row.attribute);
        const rest = held.filter((d) => d !== row.id);
        // Part of the caller's write; the store keeps no author for updates, so without an
        // actor the move is attributed to the system.
        await records.updateRecord(row.object, row.record_id, { [row.attribute]: oldSpec.multiple ? rest : (rest[0] ?? null) }, '*', actor ?? SYSTEM_ACTOR);
      }
    }
    const inSlot = this.db.prepare('SELECT id FROM _ss_documents WHERE object = ? AND record_id = ? AND attribute = ?');
    for (const { recordId, spec, value } of slots) {
      const keep = new Set(documentIds(value));
      const rows = inSlot.all(object, recordId, spec.name) as { id: string }[];
      this.deleteDocumentRows(rows.map((r) => r.id).filter((id) => !keep.has(id)));
    }
    return [];
  }

  /** Records deleted (single or bulk): their documents go too. Call inside the delete transaction. */
  deleteRecordDocuments(object: string, recordIds: readonly string[]): void {
    const ids: string[] = [];
    const q = this.db.prepare('SELECT id FROM _ss_documents WHERE object = ? AND record_id = ?');
    for (const r of recordIds) for (const row of q.all(object, r) as { id: string }[]) ids.push(row.id);
    this.deleteDocumentRows(ids);
  }

  /** An attribute or a whole object dropped (sync or schema route): its documents go. */
  deleteSchemaDocuments(object: string, attribute?: string): void {
    const rows = (
      attribute === undefined
        ? this.db.prepare('SELECT id FROM _ss_documents WHERE object = ?').all(object)
        : this.db.prepare('SELECT id FROM _ss_documents WHERE object = ? AND attribute = ?').all(object, attribute)
    ) as { id: string }[];
    this.deleteDocumentRows(rows.map((r) => r.id));
  }

  /** An object renamed (sync `renamedFrom`): its documents' slots follow. */
  renameSchemaObject(from: string, to: string): void {
    this.db.prepare('UPDATE _ss_documents SET object = ? WHERE object = ?').run(to, from);
  }

  /** A document attribute renamed (sync `renamedFrom` or the schema route): its slots follow. */
  renameSchemaSlot(object: string, from: string, to: string): void {
    this.db.prepare('UPDATE _ss_documents SET attribute = ? WHERE object = ? AND attribute = ?').run(to, object, from);
  }

  /**
   * Delete bytes whose digest no file row uses. Call after the outermost transaction has
   * ended (committed or rolled back): deciding inside it could delete bytes a rollback
   * brings back a row for.
   */
  flushReleases(): void {
    // Called after every record write: with nothing to release, prepare nothing (a create's
    // hot path; preparing this statement each time was ~5 µs of it).
    if (this.db.inTransaction || this.releaseCandidates.size === 0) return;
    const count = this.db.prepare('SELECT COUNT(*) AS n FROM _ss_files WHERE sha256 = ?');
    for (const sha of [...this.releaseCandidates]) {
      this.releaseCandidates.delete(sha);
      const referenced = intColumn(count.get(sha), 'n') > 0 || (this.inFlight.get(sha) ?? 0) > 0;
      this.blobs.release(sha, referenced);
    }
  }

  // ---------------------------------------------------------------- internals

  private async writeBytes(stream: Readable, options: Parameters<BlobStore['writeStream']>[1]) {
    const written = await this.blobs.writeStream(stream, options);
    this.inFlight.set(written.sha256, (this.inFlight.get(written.sha256) ?? 0) + 1);
    return written;
  }

  private doneWriting(sha: string): void {
    const n = (this.inFlight.get(sha) ?? 1) - 1;
    if (n <= 0) this.inFlight.delete(sha);
    else this.inFlight.set(sha, n);
  }

  private insertFile(written: { sha256: string; size: number }, input: UploadInput, actor: Actor): FileOut {
    const id = randomUUID();
    this.db
      .prepare('INSERT INTO _ss_files (id, name, mime_type, size, sha256, uploaded_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(id, cleanFileName(input.name), normalizeMime(input.mimeType), written.size, written.sha256, actor.keyId, new Date().toISOString());
    return this.getFile(id);
  }

  /** Document rows and, with the last document of a file, the file row; bytes are queued. */
  private deleteDocumentRows(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const get = this.db.prepare('SELECT file_id FROM _ss_documents WHERE id = ?');
    const del = this.db.prepare('DELETE FROM _ss_documents WHERE id = ?');
    const users = this.db.prepare('SELECT COUNT(*) AS n FROM _ss_documents WHERE file_id = ?');
    const file = this.db.prepare('SELECT sha256 FROM _ss_files WHERE id = ?');
    const delFile = this.db.prepare('DELETE FROM _ss_files WHERE id = ?');
    for (const id of ids) {
      const row = get.get(id) as { file_id: string } | undefined;
      if (!row) continue;
      del.run(id);
      if (intColumn(users.get(row.file_id), 'n') === 0) {
        const f = file.get(row.file_id) as { sha256: string } | undefined;
        delFile.run(row.file_id);
        if (f) this.releaseCandidates.add(f.sha256);
      }
    }
  }
}

async function documentAttribute(records: RecordPort, object: string, attribute: string): Promise<AttributeSpec> {
  const obj = await records.requireObject(object);
  const spec = obj.attributes.find((a) => a.name === attribute);
  if (!spec) throw new ServiceError('SCHEMA_ATTRIBUTE_NOT_FOUND', `Object ${object} has no attribute ${attribute}`);
  if (spec.type !== 'document') {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', `${object}.${attribute} is a ${spec.type} attribute, not a document attribute`, {
      errors: [{ path: [attribute], message: `${attribute} is not a document attribute` }],
    });
  }
  return spec;
}

async function checkSlot(records: RecordPort, target: { object: string; recordId: string; attribute: string }, mimeType: string | undefined): Promise<AttributeSpec> {
  const spec = await documentAttribute(records, target.object, target.attribute);
  const record = await records.getRecord(target.object, target.recordId);
  if (!spec.multiple && documentIds(record.values[target.attribute]).length > 0) {
    throw new ServiceError('DOCUMENT_MULTIPLE_NOT_ALLOWED', `${target.object}.${target.attribute} takes a single file and already holds one`, {
      fix: 'delete the current document first (DELETE /documents/:id) or declare the attribute with multiple: true',
    });
  }
  const mime = normalizeMime(mimeType);
  if (!mimeAccepted(mime, spec.accepts)) {
    throw new ServiceError('DOCUMENT_MIME_NOT_ACCEPTED', `${target.object}.${target.attribute} does not accept ${mime} (accepts ${spec.accepts?.join(', ')})`);
  }
  return spec;
}

async function tryGetRecord(records: RecordPort, object: string, id: string): Promise<RecordOut | undefined> {
  try {
    return await records.getRecord(object, id);
  } catch (err) {
    if (err instanceof ServiceError && (err.code === 'SCHEMA_RECORD_NOT_FOUND' || err.code === 'SCHEMA_OBJECT_NOT_FOUND')) return undefined;
    throw err;
  }
}
