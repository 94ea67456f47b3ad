import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import { parseValue } from '../../model/types/registry.js';
import { documentAttribute, documentIds, documentValue, invalidField, type DocumentSlot } from './file-rules.js';
import type { FieldError } from '../../errors.js';
import type { Codec, Executor, Param } from '../port.js';
import type { DocumentMove, Documents } from './documents.js';
import { tableIdent } from './idents.js';
import { now } from './time.js';

/**
 * The records side's one door for documents: read the ids a record's document attribute
 * holds, and replace them. The documents module never writes a record; the upload, the
 * document delete and a record write that moved a document (DocumentMove) come here, and
 * nothing here calls back into documents (issue 14: no re-entrant store ↔ files calls).
 * A slot write is a record update like any other: its version moves and updated_at is
 * set, under the attribute's one value rule (a required single-file slot cannot be left
 * empty, engine/model/types/registry.ts parseValue).
 */

/** How the backend keeps a document value in its column: its codec for `document`. */
export type SlotCodec = Codec;

/** The catalogue's lookup of an object by name (undefined when there is none). */
export type ObjectLookup = (name: string) => StoredObject | undefined | Promise<StoredObject | undefined>;

/** The ids the slot holds, or undefined when the record does not exist. */
export async function readDocumentSlot(ex: Executor, o: StoredObject, recordId: string, spec: AttributeSpec, codec: SlotCodec): Promise<string[] | undefined> {
  const row = await ex.get<Record<string, Param>>(`SELECT ${sqlIdent(spec.name)} AS v FROM ${tableIdent(o.name)} WHERE id = ?`, [recordId]);
  if (!row) return undefined;
  const v = row['v'];
  return documentIds(v === null || v === undefined ? null : codec.decode(v, spec));
}

/** Replace the slot's ids (in this order) as one record update; the caller has checked the record exists. */
export async function writeDocumentSlot(tx: Executor, o: StoredObject, recordId: string, spec: AttributeSpec, ids: readonly string[], codec: SlotCodec): Promise<void> {
  const value = documentValue(spec, ids);
  const parsed = parseValue(spec, value);
  if (!parsed.ok) throw invalidField(spec.name, `${spec.name} ${parsed.message}`);
  await tx.run(`UPDATE ${tableIdent(o.name)} SET version = version + 1, updated_at = ?, ${sqlIdent(spec.name)} = ? WHERE id = ?`, [
    now(),
    value === null ? null : codec.encode(value, spec),
    recordId,
  ]);
}

/**
 * After a record write moved documents (Documents.applyDocumentValues): each record a document left
 * loses its id, unless its value no longer names it (a record of the same write that
 * dropped it). Part of the caller's transaction.
 */
async function detachMoved(
  tx: Executor,
  moves: readonly DocumentMove[],
  objectOf: ObjectLookup,
  codec: SlotCodec,
): Promise<void> {
  for (const m of moves) {
    const o = await objectOf(m.object);
    if (!o) continue;
    const spec = documentAttribute(o, m.attribute);
    const held = await readDocumentSlot(tx, o, m.recordId, spec, codec);
    if (held?.includes(m.documentId)) await writeDocumentSlot(tx, o, m.recordId, spec, held.filter((d) => d !== m.documentId), codec);
  }
}

/**
 * A record write's document slots (every slot of the write in one call, after its rows are
 * written, inside its transaction): the documents module judges and rebinds them, then the
 * records a document moved away from lose its id here. Returns the per-field errors (the
 * caller refuses the write with them); DOCUMENT_* refusals throw.
 */
export async function applyDocumentSlots(
  tx: Executor,
  documents: Documents,
  object: string,
  slots: readonly DocumentSlot[],
  objectOf: ObjectLookup,
  codec: SlotCodec,
  mayTakeFrom: (object: string) => boolean,
): Promise<FieldError[]> {
  const { errors, moves } = await documents.applyDocumentValues(tx, object, slots, mayTakeFrom);
  if (errors.length > 0) return errors;
  await detachMoved(tx, moves, objectOf, codec);
  return [];
}
