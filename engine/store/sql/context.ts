import type { FieldError } from '../../errors.js';
import type { AttributeSpec, AttributeType } from '../../model/attribute.js';
import type { RecordOut, StoredObject } from '../../model/stored.js';
import type { Backend, Codec, Dialect, Executor, FulltextPort, SchemaDdl } from '../port.js';
import type { Actor } from '../types.js';
import type { Catalog } from './catalog.js';
import type { SourceCache } from './sources-cache.js';

/**
 * What every module of the backend-neutral core works with: the backend's parts, the
 * process's caches, and the documents hooks. Passed explicitly (no module reaches into
 * another's tables: each owns its `_ss_` tables and exports functions over an Executor).
 */
export interface Core {
  readonly backend: Backend;
  readonly dialect: Dialect;
  readonly codecs: Record<AttributeType, Codec>;
  readonly ddl: SchemaDdl;
  readonly fulltext: FulltextPort;
  readonly catalog: Catalog;
  readonly sources: SourceCache;
  /** Present when the store was opened with a folder for file bytes. */
  readonly documents?: DocumentHooks;
}

/** The record operations documents need, bound to the caller's transaction (never a new one). */
export interface RecordPort {
  requireObject(idOrName: string): Promise<StoredObject>;
  getRecord(object: string, id: string): Promise<RecordOut>;
  updateRecord(object: string, id: string, patch: Record<string, unknown>, ifMatch: number | '*', actor: Actor): Promise<RecordOut>;
}

/** One document slot of a record write (engine/store/sqlite/files.ts applyDocumentValues). */
export interface DocumentSlot {
  recordId: string;
  spec: AttributeSpec;
  value: unknown;
  path: (string | number)[];
}

/**
 * What the record and schema paths ask of files and documents, inside their transaction
 * (`tx`); `records` is the record side bound to that same transaction.
 */
export interface DocumentHooks {
  applyDocumentValues(tx: Executor, records: RecordPort, object: string, slots: readonly DocumentSlot[], actor?: Actor): Promise<FieldError[]>;
  deleteRecordDocuments(tx: Executor, object: string, recordIds: readonly string[]): Promise<void>;
  deleteSchemaDocuments(tx: Executor, object: string, attribute?: string): Promise<void>;
  renameSchemaSlot(tx: Executor, object: string, from: string, to: string): Promise<void>;
  renameSchemaObject(tx: Executor, from: string, to: string): Promise<void>;
  /** After the outermost transaction ended (committed or not): bytes no row uses go. */
  flushReleases(): void;
}
