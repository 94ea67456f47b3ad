import type { Readable } from 'node:stream';
import { ServiceError } from '../../errors.js';
import { DEFAULT_MAX_FILE_SIZE, type AttributeSpec } from '../../model/attribute.js';
import { titleProblem } from '../../model/file-names.js';
import type { FileOut, StoredObject } from '../../model/stored.js';
import type { Actor, UploadInput } from '../types.js';
import { holdsDocuments } from '../../model/types/registry.js';

/**
 * The rules of files and documents that need no database (contract.md §3 "Files and
 * documents", issue 5): MIME matching, sizes, document ids in a record value, the
 * refusals. One definition each, used by the files module (sql/files.ts), the documents
 * module (sql/documents.ts) and the upload service (files-service.ts).
 */

/** POST /files has no attribute to limit it; a server-wide cap keeps the disk safe. */
export const DEFAULT_MAX_UPLOAD_BYTES = 1024 * 1024 * 1024;

/** One document attribute of one record, with the value a record write gives it. */
export interface DocumentSlot {
  recordId: string;
  spec: AttributeSpec;
  value: unknown;
  /** Where the value is in the request (`["records", 1, "values", "atts"]`), for errors. */
  path: (string | number)[];
}

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

/** The ids of a document value as stored in a record (one id, a list, or nothing). */
export function documentIds(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return typeof value === 'string' ? [value] : [];
}

/** A slot's value holding `ids`: a list when `multiple`, else the one id or null. */
export function documentValue(spec: AttributeSpec, ids: readonly string[]): string[] | string | null {
  return spec.multiple ? [...ids] : (ids[0] ?? null);
}

/** A name or title refused: 400 naming the field (service-interface.md Errors rule 2). */
export function invalidField(field: string, problem: string): ServiceError {
  return new ServiceError('SCHEMA_VALIDATION_FAILED', problem, { errors: [{ path: [field], message: problem }] });
}

export function fileNotFound(id: string): ServiceError {
  // The spec names no file-specific code; the document code is its "target does not exist".
  return new ServiceError('DOCUMENT_NOT_FOUND_FOR_OPERATION', `File ${id} does not exist`);
}

export function documentNotFound(id: string): ServiceError {
  return new ServiceError('DOCUMENT_NOT_FOUND_FOR_OPERATION', `Document ${id} does not exist`);
}

export function sizeWords(bytes: number): string {
  for (const [unit, n] of [['GB', 1024 ** 3], ['MB', 1024 ** 2], ['KB', 1024]] as const) {
    if (bytes >= n && bytes % n === 0) return `${bytes / n}${unit}`;
  }
  return `${bytes} bytes`;
}

/** An upload's `title` field obeys PATCH /documents' rule; refused before anything is kept. */
export function checkTitle(title: string | undefined): void {
  const problem = title === undefined ? null : titleProblem(title);
  if (problem) throw invalidField('title', problem);
}

export function nonBlank(s: string | undefined): string | undefined {
  return s !== undefined && s.trim() !== '' ? s : undefined;
}

/**
 * service-interface.md error table: changing someone else's upload is SCHEMA_ACCESS_DENIED
 * (500, masked); owners and admins may change any file. Rename and delete share the rule.
 */
export function assertMayChange(file: FileOut, actor: Actor, verb: 'rename' | 'delete'): void {
  const privileged = actor.role === 'owner' || actor.role === 'admin';
  if (!privileged && file.uploadedBy !== actor.keyId) {
    throw new ServiceError('SCHEMA_ACCESS_DENIED', `Key ${actor.keyId} may not ${verb} file ${file.id}, uploaded by ${file.uploadedBy ?? 'unknown'}`);
  }
}

/** `records[1].values.atts` for an error message naming another place of the same request. */
export function pathText(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The document attribute `attribute` of `o`: 404 when missing, 400 when not a document. */
export function documentAttribute(o: StoredObject, attribute: string): AttributeSpec {
  const spec = o.attributes.find((a) => a.name === attribute);
  if (!spec) throw new ServiceError('SCHEMA_ATTRIBUTE_NOT_FOUND', `Object ${o.name} has no attribute ${attribute}`);
  if (!holdsDocuments(spec)) {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', `${o.name}.${attribute} is a ${spec.type} attribute, not a document attribute`, {
      errors: [{ path: [attribute], message: `${attribute} is not a document attribute` }],
    });
  }
  return spec;
}

/**
 * POST /upload's slot rules, known before a byte is read and checked again inside the
 * transaction: the single-file rule against the ids the record holds, then `accepts`.
 */
export function checkUploadSlot(object: string, spec: AttributeSpec, held: readonly string[], mimeType: string | undefined): void {
  if (!spec.multiple && held.length > 0) {
    throw new ServiceError('DOCUMENT_MULTIPLE_NOT_ALLOWED', `${object}.${spec.name} takes a single file and already holds one`, {
      fix: 'delete the current document first (DELETE /documents/:id) or declare the attribute with multiple: true',
    });
  }
  const mime = normalizeMime(mimeType);
  if (!mimeAccepted(mime, spec.accepts)) {
    throw new ServiceError('DOCUMENT_MIME_NOT_ACCEPTED', `${object}.${spec.name} does not accept ${mime} (accepts ${spec.accepts?.join(', ')})`);
  }
}

/** An attribute's size cap for uploads and for documents named in record writes. */
export function maxFileSize(spec: AttributeSpec): number {
  return spec.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
}

/** A stored file named by a record write must fit the attribute as an upload would. */
export function checkDocumentFile(object: string, spec: AttributeSpec, file: { mimeType: string; size: number }): void {
  if (!mimeAccepted(file.mimeType, spec.accepts)) {
    throw new ServiceError('DOCUMENT_MIME_NOT_ACCEPTED', `${object}.${spec.name} does not accept ${file.mimeType} (accepts ${spec.accepts?.join(', ')})`);
  }
  const max = maxFileSize(spec);
  if (file.size > max) throw new ServiceError('DOCUMENT_FILE_TOO_LARGE', `${object}.${spec.name} accepts files up to ${sizeWords(max)}`);
}
