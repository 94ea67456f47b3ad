import { newId } from '../../model/ids.js';
import { forbidden, ServiceError, type FieldError } from '../../errors.js';
import type { DocumentOut } from '../../model/stored.js';
import { checkDocumentFile, documentIds, documentNotFound, pathText, type DocumentSlot } from './file-rules.js';
import type { Executor } from '../port.js';
import { deleteFileRow, findFile } from './files.js';
import { intColumn } from './rows.js';
import { now } from './time.js';

/**
 * The documents module (contract.md §3 "Files and documents", issue 5): the
 * `_ss_documents` rows. A document is a titled use of a file in one slot — one record's
 * document attribute — and a record's value for that attribute is its document id(s).
 * Documents are owned by their slot: detaching one from the record's value, deleting the
 * record, or dropping the attribute deletes the document row, and with the last document
 * of a file the file row too (uploads to a slot create their file for it).
 *
 * This module never writes a record. What it needs from the records side comes in as data
 * (the slots a record write sets, with the values it wrote) and what the records side must
 * do in return goes back as data (`DocumentMove`: the record a document left, whose value
 * the records side then rewrites). So a record write calls in here once, and nothing here
 * calls back into a record write: no store ↔ documents re-entrance.
 *
 * Invariant (a document is claimed by at most one slot): the slot is a column of the
 * document's own row, so a row names exactly one; a record value agrees with the rows
 * because the write that moves a document rebinds the row, and the records side removes
 * the id from the old record, in the same transaction that read the row's old slot. Two
 * writes claiming one document cannot both read the old slot and both rebind it: SQLite
 * runs write transactions one at a time (BEGIN IMMEDIATE, sqlite/driver.ts); a backend
 * with concurrent writers owes the same through `Driver.transaction` (SERIALIZABLE with
 * retry, or the document row locked FOR UPDATE before it is read).
 */

/** The slot a document left when a record write named it elsewhere. */
export interface DocumentMove {
  documentId: string;
  object: string;
  recordId: string;
  attribute: string;
}

/** Where a deleted file row's bytes are reported, to be freed once the transaction ends (file-bytes.ts). */
export interface ByteReleases {
  release(sha256: string): void;
}

type Row = Record<string, unknown>;

function text(row: Row, column: string): string {
  const v = row[column];
  if (typeof v !== 'string') throw new Error(`expected text in _ss_documents.${column}, got ${typeof v}`);
  return v;
}

const ids = (rows: readonly Row[]): string[] => rows.map((r) => text(r, 'id'));

function toDocument(row: Row): DocumentOut {
  return {
    id: text(row, 'id'),
    title: text(row, 'title'),
    fileId: text(row, 'file_id'),
    object: text(row, 'object'),
    recordId: text(row, 'record_id'),
    attribute: text(row, 'attribute'),
    createdAt: text(row, 'created_at'),
  };
}

const COLUMNS = 'id, title, file_id, object, record_id, attribute, created_at';

/** How many documents an attribute's slots hold (the planner's probe: what dropping it deletes). */
export async function countSlotDocuments(ex: Executor, object: string, attribute: string): Promise<number> {
  return intColumn(await ex.get('SELECT COUNT(*) AS n FROM _ss_documents WHERE object = ? AND attribute = ?', [object, attribute]), 'n');
}

export class Documents {
  constructor(private readonly bytes: ByteReleases) {}

  async find(ex: Executor, id: string): Promise<DocumentOut | undefined> {
    const row = await ex.get<Row>(`SELECT ${COLUMNS} FROM _ss_documents WHERE id = ?`, [id]);
    return row ? toDocument(row) : undefined;
  }

  async require(ex: Executor, id: string): Promise<DocumentOut> {
    const doc = await this.find(ex, id);
    if (!doc) throw documentNotFound(id);
    return doc;
  }

  /** A new document of an uploaded file in one slot (the upload writes the record's value). */
  async insert(tx: Executor, doc: Omit<DocumentOut, 'id' | 'createdAt'>): Promise<DocumentOut> {
    const out: DocumentOut = { id: newId(), ...doc, createdAt: now() };
    await tx.run(`INSERT INTO _ss_documents (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
      out.id,
      out.title,
      out.fileId,
      out.object,
      out.recordId,
      out.attribute,
      out.createdAt,
    ]);
    return out;
  }

  async setTitle(tx: Executor, id: string, title: string): Promise<void> {
    await tx.run('UPDATE _ss_documents SET title = ? WHERE id = ?', [title, id]);
  }

  /** Up to `limit` documents that use a file (DELETE /files refuses while there are any). */
  async usersOfFile(ex: Executor, fileId: string, limit: number): Promise<string[]> {
    return ids(await ex.all<Row>('SELECT id FROM _ss_documents WHERE file_id = ? LIMIT ?', [fileId, limit]));
  }

  /**
   * Run inside a record write's transaction once for the whole write (one record or a
   * batch), after its rows are written (contract.md §3: "Document values are document ids";
   * issue 5: record create/update accept existing document ids with the upload rules). Each
   * id must name an existing document whose file passes the attribute's accepts and
   * maxFileSize; at most one id unless `multiple`.
   *
   * A document lives in one slot (record × attribute), so one id named by two slots of the
   * write is refused at the later one: applied one after the other, the second slot would
   * take the document from the first, leaving the first record's answered value wrong and
   * — with the other record's value emptied behind the document's back — the next write to
   * its slot deleting the document and its bytes.
   *
   * An id attached to another record moves here: its row is rebound to this slot, and the
   * move comes back in `moves` so the records side takes the id out of the record it left
   * (records/document-slots.ts), before the write answers. Every move happens before any
   * slot lets go of the documents it no longer names (deleted: no orphan rows), so a batch
   * that empties C and gives C's document to B moves it in either item order.
   * Existence/ownership problems come back as per-field errors so the store reports every
   * bad attribute at once; DOCUMENT_* refusals throw with their own codes.
   */
  async applyDocumentValues(
    tx: Executor,
    object: string,
    slots: readonly DocumentSlot[],
    mayTakeFrom: (object: string) => boolean,
  ): Promise<{ errors: FieldError[]; moves: DocumentMove[] }> {
    const errors: FieldError[] = [];
    const moves: DocumentMove[] = [];
    const rebinds: { id: string; recordId: string; attribute: string }[] = [];
    const namedAt = new Map<string, (string | number)[]>();
    for (const { recordId, spec, value, path } of slots) {
      const named = documentIds(value);
      if (!spec.multiple && named.length > 1) {
        throw new ServiceError('DOCUMENT_MULTIPLE_NOT_ALLOWED', `${object}.${spec.name} takes a single file`);
      }
      for (const id of named) {
        const first = namedAt.get(id);
        if (first) {
          errors.push({ path, message: `document ${id} is already named at ${pathText(first)}; a document belongs to one record's attribute` });
          continue;
        }
        namedAt.set(id, path);
        const doc = await this.find(tx, id);
        const file = doc && (await findFile(tx, doc.fileId));
        if (!doc || !file) {
          errors.push({ path, message: `document ${id} does not exist` });
          continue;
        }
        const here = doc.object === object && doc.recordId === recordId;
        if (here && doc.attribute !== spec.name) {
          errors.push({ path, message: `document ${id} is already attached to ${doc.attribute} of this record` });
          continue;
        }
        checkDocumentFile(object, spec, file);
        if (!here) {
          // Taking a document changes the record it leaves: refused as any write the key may
          // not make, naming nothing (contract.md §3 SCHEMA_FORBIDDEN).
          if (!mayTakeFrom(doc.object)) throw forbidden();
          rebinds.push({ id, recordId, attribute: spec.name });
          moves.push({ documentId: id, object: doc.object, recordId: doc.recordId, attribute: doc.attribute });
        }
      }
    }
    if (errors.length > 0) return { errors, moves: [] };
    for (const r of rebinds) {
      await tx.run('UPDATE _ss_documents SET object = ?, record_id = ?, attribute = ? WHERE id = ?', [object, r.recordId, r.attribute, r.id]);
    }
    for (const { recordId, spec, value } of slots) {
      const keep = new Set(documentIds(value));
      const inSlot = ids(await tx.all<Row>('SELECT id FROM _ss_documents WHERE object = ? AND record_id = ? AND attribute = ?', [object, recordId, spec.name]));
      await this.delete(tx, inSlot.filter((id) => !keep.has(id)));
    }
    return { errors: [], moves };
  }

  /** Records deleted (single or bulk): their documents go too, in the delete's transaction. */
  async deleteRecordDocuments(tx: Executor, object: string, recordIds: readonly string[]): Promise<void> {
    const gone: string[] = [];
    for (const r of recordIds) gone.push(...ids(await tx.all<Row>('SELECT id FROM _ss_documents WHERE object = ? AND record_id = ?', [object, r])));
    await this.delete(tx, gone);
  }

  /** An attribute or a whole object dropped (sync or schema route), or a document attribute changed type: its documents go. */
  async deleteSchemaDocuments(tx: Executor, object: string, attribute?: string): Promise<void> {
    const rows =
      attribute === undefined
        ? await tx.all<Row>('SELECT id FROM _ss_documents WHERE object = ?', [object])
        : await tx.all<Row>('SELECT id FROM _ss_documents WHERE object = ? AND attribute = ?', [object, attribute]);
    await this.delete(tx, ids(rows));
  }

  /** A document attribute renamed (sync `renamedFrom` or the schema route): its slots follow. */
  async renameSchemaSlot(tx: Executor, object: string, from: string, to: string): Promise<void> {
    await tx.run('UPDATE _ss_documents SET attribute = ? WHERE object = ? AND attribute = ?', [to, object, from]);
  }

  /** An object renamed (sync `renamedFrom`): its documents' slots follow. */
  async renameSchemaObject(tx: Executor, from: string, to: string): Promise<void> {
    await tx.run('UPDATE _ss_documents SET object = ? WHERE object = ?', [to, from]);
  }

  /**
   * Document rows and, with the last document of a file, the file row; the bytes are
   * reported to `ByteReleases`, which frees them once the transaction has ended. Reporting
   * is safe however the transaction ends (or is retried, port.ts Driver.transaction): the
   * bytes go only if no committed row uses their digest when they are checked.
   */
  async delete(tx: Executor, documentIds: readonly string[]): Promise<void> {
    for (const id of documentIds) {
      const doc = await this.find(tx, id);
      if (!doc) continue;
      await tx.run('DELETE FROM _ss_documents WHERE id = ?', [id]);
      if ((await this.usersOfFile(tx, doc.fileId, 1)).length > 0) continue;
      const file = await findFile(tx, doc.fileId);
      await deleteFileRow(tx, doc.fileId);
      if (file) this.bytes.release(file.sha256);
    }
  }
}
