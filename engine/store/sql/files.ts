import { newId } from '../../model/ids.js';
import { cleanFileName } from '../../model/file-names.js';
import type { FileOut } from '../../model/stored.js';
import { fileNotFound, normalizeMime } from './file-rules.js';
import type { Executor } from '../port.js';
import type { Actor, UploadInput } from '../types.js';
import { now } from './time.js';

/**
 * The files module (contract.md §3 "Files"): the `_ss_files` rows and nothing else. A file
 * is uploaded bytes plus metadata; its bytes live in the BlobStore keyed by sha256
 * (file-bytes.ts decides when they go). Documents (documents.ts) reference files by id and
 * are the only module that deletes a file row on its own (with the file's last document).
 * Every function runs on the Executor it is given: the transaction handle of the write
 * it belongs to, or the driver for a lone read. Shared SQL, `?` placeholders.
 */

/** A row as any driver returns it: integers may come back as bigint or text (PostgreSQL int8). */
type Row = Record<string, unknown>;

function text(row: Row, column: string): string {
  const v = row[column];
  if (typeof v !== 'string') throw new Error(`expected text in _ss_files.${column}, got ${typeof v}`);
  return v;
}

function integer(row: Row, column: string): number {
  const v = row[column];
  const n = typeof v === 'number' ? v : typeof v === 'bigint' || typeof v === 'string' ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw new Error(`expected an integer in ${column}, got ${typeof v}`);
  return n;
}

function toFile(row: Row): FileOut {
  const by = row['uploaded_by'];
  return {
    id: text(row, 'id'),
    name: text(row, 'name'),
    mimeType: text(row, 'mime_type'),
    size: integer(row, 'size'),
    sha256: text(row, 'sha256'),
    uploadedBy: typeof by === 'string' ? by : null,
    createdAt: text(row, 'created_at'),
  };
}

export async function findFile(ex: Executor, id: string): Promise<FileOut | undefined> {
  const row = await ex.get<Row>('SELECT id, name, mime_type, size, sha256, uploaded_by, created_at FROM _ss_files WHERE id = ?', [id]);
  return row ? toFile(row) : undefined;
}

export async function requireFile(ex: Executor, id: string): Promise<FileOut> {
  const file = await findFile(ex, id);
  if (!file) throw fileNotFound(id);
  return file;
}

/** The row of bytes already on disk (their digest and size come from the write, never the client). */
export async function insertFile(tx: Executor, written: { sha256: string; size: number }, input: Pick<UploadInput, 'name' | 'mimeType'>, actor: Actor): Promise<FileOut> {
  const file: FileOut = {
    id: newId(),
    name: cleanFileName(input.name),
    mimeType: normalizeMime(input.mimeType),
    size: written.size,
    sha256: written.sha256,
    uploadedBy: actor.keyId,
    createdAt: now(),
  };
  await tx.run('INSERT INTO _ss_files (id, name, mime_type, size, sha256, uploaded_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
    file.id,
    file.name,
    file.mimeType,
    file.size,
    file.sha256,
    file.uploadedBy,
    file.createdAt,
  ]);
  return file;
}

export async function renameFileRow(tx: Executor, id: string, name: string): Promise<void> {
  await tx.run('UPDATE _ss_files SET name = ? WHERE id = ?', [name, id]);
}

export async function deleteFileRow(tx: Executor, id: string): Promise<void> {
  await tx.run('DELETE FROM _ss_files WHERE id = ?', [id]);
}

/** Whether any file row uses the bytes of `sha256` (identical uploads share them). */
export async function digestInUse(ex: Executor, sha256: string): Promise<boolean> {
  return (await ex.get<Row>('SELECT 1 AS used FROM _ss_files WHERE sha256 = ? LIMIT 1', [sha256])) !== undefined;
}

/** Every digest a file row uses (the garbage pass at open compares the blob folder with it). */
export async function usedDigests(ex: Executor): Promise<Set<string>> {
  const rows = await ex.all<Row>('SELECT DISTINCT sha256 FROM _ss_files');
  return new Set(rows.map((r) => text(r, 'sha256')));
}
