import { intColumn } from './rows.js';
import type { Statement } from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { ServiceError, type FieldError } from '../../errors.js';
import { SYSTEM_SPECS, type AttributePatch, type AttributeSpec } from '../../model/attribute.js';
import type { Declaration, ViewDecl } from '../../model/declaration.js';
import { objectNameProblem, quoteName, sqlIdent } from '../../model/names.js';
import type { RoleDecl } from '../../model/roles.js';
import type { Owner, RecordOut, StoredAttribute, StoredObject, StoredRole, StoredSource, StoredView } from '../../model/stored.js';
import { CODECS, type SqlValue } from './codecs.js';
import { afterBackfill, type DataFacts } from '../../plan/facts.js';
import { violationMessage } from '../../plan/messages.js';
import { applyPlan } from './apply.js';
import { backfillDefault } from './backfill.js';
import { BlobStore } from '../blobs.js';
import { isMultiValued, loadObjects, loadViews, specJson, specOfStored, tableIdent } from './catalog.js';
import { now, writeTransaction, type Db } from './database.js';
import { classifySqliteError, SqliteDriver } from './driver.js';
import { addColumn, createRecordTable, dropColumn, dropRecordTable, rebuildColumn, renameColumn, syncIndex } from './ddl.js';
import { sqlFacts, violations } from './facts.js';
import { FilesEngine, type DocumentSlot } from './files.js';
import { Idempotency } from './idempotency.js';
import { Keys } from './keys.js';
import { pushSource } from './push.js';
import { checkAttributeInput, mergeAttributePatch } from '../schema-input.js';
import { checkPermissionObjects, checkRoleName, dropRole, findRole, listRoles, refuseBuiltin, refuseIfKeysHold, refuseSourceOwned, roleNotFound, upsertRole } from './roles.js';
import { SourceHistory, type HistoryPage } from './history.js';
import { searchRecords } from './search.js';
import { afterAttributeChange, beforeSchemaChange, bulkInsertIndex, bulkUpdateIndex, dropObjectIndex, ensureDocumentTriggers, ensureSearchIndex, isTextLike } from './fulltext.js';
import { runFulltext } from './fulltext-query.js';
import { checkRuntimeView, deleteRuntimeView, putRuntimeView, refuseIfViewsRead, renameAttributeInViews, viewNotFound } from './views.js';
import type {
  Actor,
  BulkUpdateItem,
  CreateObjectInput,
  IdempotentAnswer,
  KeyOut,
  PushOptions,
  PushResult,
  Scope,
  SearchInput,
  SearchPage,
  GlobalSearchInput,
  GlobalSearchHit,
} from '../types.js';
import { columnIndex, parseRecordBody, userAttributes, validationFailed, type ParsedRow } from './values.js';
import { MAX_BULK, MAX_BULK_WRITE } from '../../model/limits.js';

export interface OpenStoreOptions {
  path: string;
  /** Folder for file bytes (contract.md §3 "Files"): default `<dir of path>/files`; false: no files API. */
  filesDir?: string | false;
  maxUploadBytes?: number;
  /** Where the store says what it did on open (the search index rebuilt); default stderr. */
  notice?: (line: string) => void;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A record as the store-side rules see it: its id, parsed values and item path. */
interface StoredRuleRow {
  id: string;
  parsed: ParsedRow;
  path: (string | number)[];
}

/** The store-side rules: relation values name records that exist; unique values are free. */
type StoredRule = 'relations' | 'unique';
const ALL_STORED_RULES: readonly StoredRule[] = ['relations', 'unique'];

/** Whether any of these attributes has one of these store-side rules. */
function hasStoredRules(attrs: readonly AttributeSpec[], rules: readonly StoredRule[] = ALL_STORED_RULES): boolean {
  return attrs.some((a) => (rules.includes('unique') && a.unique) || (rules.includes('relations') && a.type === 'relation' && a.target !== undefined));
}

interface RecordRow {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
  created_by: string | null;
  [column: string]: SqlValue;
}

/**
 * The embedded backend's synchronous core (one better-sqlite3 connection). Callers outside
 * engine/store use the async Store that openStore returns; tests reach the core for the
 * statement cache and the data probe.
 */
export class SqliteStore {
  readonly path: string;
  readonly driver: SqliteDriver;
  readonly db: Db;
  readonly files?: FilesEngine;
  readonly history: SourceHistory;
  private cache: Map<string, StoredObject> | null = null;
  private readonly idempotency: Idempotency;
  private readonly keys: Keys;

  constructor(options: OpenStoreOptions) {
    this.path = options.path;
    this.driver = new SqliteDriver(options.path);
    this.db = this.driver.db;
    this.idempotency = new Idempotency(this.db);
    this.history = new SourceHistory(this.db);
    this.keys = new Keys(this.db, (role) => findRole(this.db, role) !== undefined);
    if (options.filesDir !== false) {
      const blobs = new BlobStore(options.filesDir ?? join(dirname(options.path), 'files'));
      this.files = new FilesEngine(this.db, blobs, this, {
        ...(options.maxUploadBytes === undefined ? {} : { maxUploadBytes: options.maxUploadBytes }),
        serial: (fn) => this.driver.serial(fn),
      });
    }
    this.openSearchIndex(options.notice ?? ((line) => process.stderr.write(`${line}\n`)));
  }

  /** Issue 17: the index is built on open only when missing or of an older layout, and says so. */
  private openSearchIndex(notice: (line: string) => void): void {
    writeTransaction(this.db, () => {
      const objects = this.listObjects();
      const records = objects.reduce((n, o) => n + this.countRecords(o.name), 0);
      const had = this.meta("SELECT value FROM _ss_meta WHERE key = 'search_layout'").pluck().get() as string | undefined;
      if (ensureSearchIndex(this.db, objects)) {
        if (had !== undefined || records > 0) notice(`schemasync: search index rebuilt (${had === undefined ? 'missing' : `layout ${had} was older`}): ${records} records in ${objects.length} objects`);
      } else ensureDocumentTriggers(this.db);
    });
    this.schemaChanged();
  }

  close(): void {
    this.driver.clearStatements();
    if (this.db.open) this.db.close();
  }

  // ------------------------------------------------------------------ internals

  stmt(sql: string, options: { cache?: boolean } = {}): Statement {
    return this.driver.stmt(sql, options);
  }

  /** How many prepared record statements are cached (bounded by STATEMENT_CACHE_SIZE). */
  statementCacheSize(): number {
    return this.driver.statementCacheSize();
  }

  meta(sql: string): Statement {
    return this.driver.meta(sql);
  }

  /** Call after any schema write: objects and prepared statements are read again. */
  schemaChanged(): void {
    this.cache = null;
    this.driver.clearStatements();
  }

  /**
   * After a write to one object's schema: re-read only that object (a 1,000-object push
   * must not re-read the whole catalogue per step), keeping its place in the map.
   */
  objectChanged(objectId: string): void {
    this.driver.clearStatements();
    if (!this.cache) return;
    const fresh = loadObjects((sql) => this.meta(sql), objectId);
    for (const [name, o] of this.cache) if (o.id === objectId && fresh.has(name)) this.cache.set(name, fresh.get(name)!);
    for (const [name, o] of this.cache) if (o.id === objectId && !fresh.has(name)) this.cache.delete(name);
    for (const [name, o] of fresh) if (!this.cache.has(name)) this.cache.set(name, o);
  }

  private seenDataVersion: unknown;
  objects(): Map<string, StoredObject> {
    // Another process on the same file (a CLI beside the server) may have changed the schema:
    // data_version moves only on other connections' commits, so one process never pays for it.
    const v = this.meta('PRAGMA data_version').pluck().get();
    if (v !== this.seenDataVersion) {
      this.seenDataVersion = v;
      if (!this.db.inTransaction) this.schemaChanged();
    }
    if (!this.cache) this.cache = loadObjects((sql) => this.meta(sql));
    return this.cache;
  }

  /**
   * A schema write: one transaction. The steps keep the object cache current as they go;
   * a rollback drops it (and the statements) so nothing of the undone schema survives.
   */
  private schemaTx<T>(fn: () => T): T {
    try {
      return writeTransaction(this.db, fn);
    } catch (err) {
      this.schemaChanged();
      throw err;
    } finally {
      this.files?.flushReleases();
    }
  }

  private tx<T>(fn: () => T): T {
    try {
      return writeTransaction(this.db, fn);
    } finally {
      this.files?.flushReleases();
    }
  }

  // ------------------------------------------------------------------ schema

  listObjects(): StoredObject[] {
    return [...this.objects().values()];
  }

  findObject(idOrName: string): StoredObject | undefined {
    const objects = this.objects();
    const byName = objects.get(idOrName);
    if (byName) return byName;
    for (const o of objects.values()) if (o.id === idOrName) return o;
    return undefined;
  }

  requireObject(idOrName: string): StoredObject {
    const o = this.findObject(idOrName);
    if (!o) throw new ServiceError('SCHEMA_OBJECT_NOT_FOUND', `Object ${quoteName(idOrName)} does not exist`);
    return o;
  }

  createObject(input: CreateObjectInput, owner: Owner): StoredObject {
    const problem = objectNameProblem(input.name);
    if (problem) throw new ServiceError(problem.code, problem.message, { errors: [{ path: ['name'], message: problem.message }] });
    const specs = (input.attributes ?? []).map((a, i) => checkAttributeInput(a, ['attributes', i]));
    const seen = new Set<string>();
    for (const s of specs) {
      if (seen.has(s.name)) throw new ServiceError('SCHEMA_DUPLICATE_ATTRIBUTE', `Attribute "${s.name}" is listed twice for object "${input.name}"`);
      seen.add(s.name);
    }
    return this.schemaTx(() => {
      this.insertObject(input.name, { label: input.label, description: input.description }, specs, owner);
      return this.requireObject(input.name);
    });
  }

  /** Inside a transaction: meta rows, table, indexes. Shared by the route and the plan applier. */
  insertObject(name: string, info: { label?: string | undefined; description?: string | undefined }, specs: AttributeSpec[], owner: Owner): void {
    if (this.objects().has(name)) {
      throw new ServiceError('SCHEMA_DUPLICATE_OBJECT', `Object "${name}" already exists`);
    }
    for (const s of specs) this.checkRelationTarget(s, name);
    const id = randomUUID();
    const t = now();
    const position = intColumn(this.meta('SELECT COALESCE(MAX(position), 0) + 1 AS p FROM _ss_objects').get(), 'p');
    this
      .meta('INSERT INTO _ss_objects (id, name, label, description, owner_kind, owner_id, protected, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)')
      .run(id, name, info.label ?? null, info.description ?? null, owner.kind, owner.id ?? null, position, t, t);
    SYSTEM_SPECS.forEach((s, i) => this.insertAttributeRow(id, s, i, { kind: 'core' }, true));
    createRecordTable(this.db, name, specs);
    specs.forEach((s, i) => {
      const attrId = this.insertAttributeRow(id, s, i, owner, false);
      syncIndex(this.db, name, attrId, s, true);
    });
    this.objectChanged(id);
    afterAttributeChange(this.db, this.requireObject(name), undefined, undefined);
  }

  private insertAttributeRow(objectId: string, spec: AttributeSpec, position: number, owner: Owner, system: boolean): string {
    const id = randomUUID();
    const t = now();
    this
      .meta(
        'INSERT INTO _ss_attributes (id, object_id, name, spec, position, protected, system, owner_kind, owner_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(id, objectId, spec.name, specJson(spec), position, system ? 1 : 0, system ? 1 : 0, owner.kind, owner.id ?? null, t, t);
    return id;
  }

  private checkRelationTarget(spec: AttributeSpec, self: string): void {
    if (spec.type !== 'relation' || spec.target === undefined) return;
    if (spec.target !== self && !this.objects().has(spec.target)) {
      throw new ServiceError('SCHEMA_VALIDATION_FAILED', `Relation "${spec.name}" targets object "${spec.target}", which does not exist`, {
        errors: [{ path: ['target'], message: `object "${spec.target}" does not exist` }],
      });
    }
  }

  /** Relation attributes of other objects that target `object`, as `object.attribute`. */
  referencesTo(object: string): string[] {
    const refs: string[] = [];
    for (const o of this.objects().values()) {
      if (o.name === object) continue;
      for (const a of o.attributes) if (a.type === 'relation' && a.target === object) refs.push(`${o.name}.${a.name}`);
    }
    return refs;
  }

  deleteObject(idOrName: string, options: { force?: boolean } = {}): void {
    this.schemaTx(() => {
      const o = this.requireObject(idOrName);
      if (o.protected) throw new ServiceError('SCHEMA_PROTECTED_OBJECT', `Object "${o.name}" is protected and cannot be deleted`);
      const refs = this.referencesTo(o.name);
      if (refs.length > 0) {
        throw new ServiceError('SCHEMA_OBJECT_REFERENCED', `Object "${o.name}" is referenced by ${refs.join(', ')}`, {
          fix: `delete or retarget ${refs.join(', ')} first`,
        });
      }
      refuseIfViewsRead(this.db, o.name);
      const count = this.countRecords(o.name);
      if (count > 0 && !options.force) {
        throw new ServiceError('SCHEMA_CONFLICT', `Object "${o.name}" holds ${count} record${count === 1 ? '' : 's'}; delete with force=true to drop them`, {
          fix: 'DELETE /schema/objects/:id?force=true',
        });
      }
      this.dropObjectNow(o);
    });
  }

  /** Inside a transaction: documents, meta rows and the table. */
  dropObjectNow(o: StoredObject): void {
    dropObjectIndex(this.db, o.name);
    this.files?.deleteSchemaDocuments(o.name);
    this.meta('DELETE FROM _ss_attributes WHERE object_id = ?').run(o.id);
    this.meta('DELETE FROM _ss_objects WHERE id = ?').run(o.id);
    dropRecordTable(this.db, o.name);
    this.driver.clearStatements();
    this.cache?.delete(o.name);
  }

  countRecords(object: string): number {
    return intColumn(this.stmt(`SELECT COUNT(*) AS n FROM ${tableIdent(object)}`).get(), 'n');
  }

  private requireAttribute(o: StoredObject, idOrName: string): StoredAttribute {
    const a = o.attributes.find((x) => x.name === idOrName) ?? o.attributes.find((x) => x.id === idOrName);
    if (!a) throw new ServiceError('SCHEMA_ATTRIBUTE_NOT_FOUND', `Object "${o.name}" has no attribute ${quoteName(idOrName)}`);
    return a;
  }

  addAttribute(object: string, raw: AttributeSpec, owner: Owner): StoredAttribute {
    const o = this.requireObject(object);
    if (o.protected) throw new ServiceError('SCHEMA_PROTECTED_OBJECT', `Object "${o.name}" is protected; its attributes cannot change`);
    const spec = checkAttributeInput(raw);
    return this.schemaTx(() => {
      this.addAttributeNow(o.name, spec, owner);
      return this.requireAttribute(this.requireObject(o.name), spec.name);
    });
  }

  /** Inside a transaction: meta row, column, default fill, data check, index. */
  addAttributeNow(object: string, spec: AttributeSpec, owner: Owner): void {
    const o = this.requireObject(object);
    if (o.attributes.some((a) => a.name === spec.name)) {
      throw new ServiceError('SCHEMA_DUPLICATE_ATTRIBUTE', `Object "${o.name}" already has an attribute "${spec.name}"`);
    }
    this.checkRelationTarget(spec, o.name);
    const position = intColumn(this.meta('SELECT COALESCE(MAX(position), 0) + 1 AS p FROM _ss_attributes WHERE object_id = ?').get(o.id), 'p');
    const attrId = this.insertAttributeRow(o.id, spec, position, owner, false);
    beforeSchemaChange(this.db, o.name);
    addColumn(this.db, o.name, spec);
    this.objectChanged(o.id);
    // The new column is empty everywhere: every record takes the default, by the one backfill
    // rule (each filled record's version moves, as for a required attribute's backfill).
    backfillDefault(this.db, o.name, spec);
    // the default is written above, so there is nothing left to backfill: refuse only
    this.refuseViolations(o.name, spec, spec);
    syncIndex(this.db, o.name, attrId, spec, true);
    afterAttributeChange(this.db, this.requireObject(o.name), undefined, spec.name);
  }

  /**
   * 400 SCHEMA_VALIDATION_FAILED naming rule, count and sample ids (issue 3: PUT …/attributes/:id),
   * except what the default backfills (the planner's rule, afterBackfill). Returns whether
   * the change must backfill.
   */
  private refuseViolations(object: string, current: AttributeSpec, next: AttributeSpec): boolean {
    const all = violations(this.db, object, current, next);
    const found = all.map((v) => afterBackfill(v, next)).filter((v) => v !== undefined);
    if (found.length === 0) return all.length > 0; // all of them (if any) are nulls the default fills
    const target = `${object}.${next.name}`;
    const texts = found.map((v) => violationMessage(v.rule, target, v.count, v.sampleIds));
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', texts.map((t) => t.message).join(' '), {
      errors: found.map((v, i) => ({ path: [next.name], message: texts[i]!.message })),
      fix: texts[0]!.fix,
      data: { violations: found },
    });
  }

  updateAttribute(object: string, attribute: string, raw: AttributePatch): StoredAttribute {
    const o = this.requireObject(object);
    // service-interface.md lists SCHEMA_PROTECTED_OBJECT (403) for PUT …/attributes/:id.
    if (o.protected) throw new ServiceError('SCHEMA_PROTECTED_OBJECT', `Object "${o.name}" is protected; its attributes cannot change`);
    const a = this.requireAttribute(o, attribute);
    if (a.system || a.protected) throw new ServiceError('SCHEMA_PROTECTED_ATTRIBUTE', `Attribute "${o.name}.${a.name}" is protected and cannot change`);
    const spec = mergeAttributePatch(specOfStored(a), raw);
    return this.schemaTx(() => {
      this.changeAttributeNow(o.name, a.name, spec, { refuse: true });
      return this.requireAttribute(this.requireObject(o.name), spec.name);
    });
  }

  /**
   * Inside a transaction: rename, type change (column rebuild), constraint change, index.
   * `refuse`: stored data that breaks `next` refuses (routes); the plan applier has already
   * decided (a destructive conversion approved by allowDestructive nulls what cannot convert)
   * and says with `backfill` whether the default fills the empty values (its plan step).
   */
  changeAttributeNow(object: string, name: string, next: AttributeSpec, options: { refuse: boolean; backfill?: boolean; owner?: Owner }): void {
    const o = this.requireObject(object);
    const a = this.requireAttribute(o, name);
    const current = specOfStored(a);
    if (next.name !== current.name) {
      if (o.attributes.some((x) => x.name === next.name)) {
        throw new ServiceError('SCHEMA_DUPLICATE_ATTRIBUTE', `Object "${o.name}" already has an attribute "${next.name}"`);
      }
    }
    this.checkRelationTarget(next, o.name);
    const backfill = options.refuse ? this.refuseViolations(o.name, current, next) : options.backfill === true;
    beforeSchemaChange(this.db, o.name);
    if (next.name !== current.name) {
      renameColumn(this.db, o.name, current.name, next.name);
      renameAttributeInViews(this.db, o.name, current.name, next.name);
    }
    // Document rows name their slot by attribute (engine/store/files.ts): they follow a
    // rename, and go with the values when the attribute stops being a document (issue 5: no orphans).
    if (current.type === 'document' && next.type !== 'document') this.files?.deleteSchemaDocuments(o.name, current.name);
    else if (current.type === 'document' && next.name !== current.name) this.files?.renameSchemaSlot(o.name, current.name, next.name);
    const renamedCurrent = { ...current, name: next.name };
    const needsRebuild = current.type !== next.type || isMultiValued(current) !== isMultiValued(next) || (current.type === 'relation' && current.multiple !== next.multiple);
    if (needsRebuild) rebuildColumn(this.db, o.name, a.id, renamedCurrent, next);
    const owner = options.owner ?? a.owner;
    this
      .meta('UPDATE _ss_attributes SET name = ?, spec = ?, owner_kind = ?, owner_id = ?, updated_at = ? WHERE id = ?')
      .run(next.name, specJson(next), owner.kind, owner.id ?? null, now(), a.id);
    this.objectChanged(o.id);
    // Renames carry the index along (SQLite rewrites it); only a changed need touches it.
    const indexed = (x: AttributeSpec): string => (x.unique ? 'unique' : x.type === 'relation' ? 'plain' : 'none');
    if (needsRebuild || indexed(current) !== indexed(next)) syncIndex(this.db, o.name, a.id, next, needsRebuild);
    if (backfill) backfillDefault(this.db, o.name, next);
    afterAttributeChange(this.db, this.requireObject(o.name), current.name, next.name);
  }

  deleteAttribute(object: string, attribute: string): void {
    this.schemaTx(() => {
      const o = this.requireObject(object);
      if (o.protected) throw new ServiceError('SCHEMA_PROTECTED_OBJECT', `Object "${o.name}" is protected; its attributes cannot be deleted`);
      const a = this.requireAttribute(o, attribute);
      if (a.system || a.protected) throw new ServiceError('SCHEMA_PROTECTED_ATTRIBUTE', `Attribute "${o.name}.${a.name}" is protected and cannot be deleted`);
      refuseIfViewsRead(this.db, o.name, a.name);
      this.dropAttributeNow(o.name, a);
    });
  }

  dropAttributeNow(object: string, a: StoredAttribute): void {
    if (a.type === 'document') this.files?.deleteSchemaDocuments(object, a.name);
    beforeSchemaChange(this.db, object);
    dropColumn(this.db, object, a.id, a.name);
    this.meta('DELETE FROM _ss_attributes WHERE id = ?').run(a.id);
    this.objectChanged(this.requireObject(object).id);
    afterAttributeChange(this.db, this.requireObject(object), a.name, undefined);
  }

  // ------------------------------------------------------------------ records

  private recordObject(object: string): StoredObject {
    return this.requireObject(object);
  }

  toRecord(o: StoredObject, row: RecordRow): RecordOut {
    const values: Record<string, unknown> = {};
    for (const a of o.attributes) {
      if (a.system) continue;
      const v = row[a.name];
      values[a.name] = v === null || v === undefined ? null : CODECS[a.type].decode(v, a);
    }
    return { id: row.id, object: o.name, version: row.version, createdAt: row.created_at, updatedAt: row.updated_at, values };
  }

  private readRow(o: StoredObject, id: string): RecordRow | undefined {
    return this.stmt(`SELECT * FROM ${tableIdent(o.name)} WHERE id = ?`).get(id) as RecordRow | undefined;
  }

  /**
   * `item` names the bulk item ("records[1]", "ids[3]"): a 404 carries no `errors` list
   * (service-interface.md Envelope: errors only for body validation), so the message says
   * which item it was (issue 3: bulk errors name the item index).
   */
  private requireRow(o: StoredObject, id: string, item?: string): RecordRow {
    const row = this.readRow(o, id);
    if (!row) throw new ServiceError('SCHEMA_RECORD_NOT_FOUND', `${item ? `${item}: ` : ''}Record ${id} of "${o.name}" does not exist`);
    return row;
  }

  getRecord(object: string, id: string): RecordOut {
    const o = this.recordObject(object);
    return this.toRecord(o, this.requireRow(o, id));
  }

  /**
   * Store-side value rules (relation targets exist, unique against stored rows and within
   * the batch). Errors are collected, not thrown, so every bad attribute is reported.
   */
  private checkStoredRules(o: StoredObject, rows: StoredRuleRow[], rules: readonly StoredRule[] = ALL_STORED_RULES): FieldError[] {
    const errors: FieldError[] = [];
    const attrs = userAttributes(o);
    // Most batches have no relation or unique attribute to check: skip the id set (10,000 ids).
    if (!hasStoredRules(attrs, rules)) return errors;
    const batchIds = new Set(rows.map((r) => r.id));
    for (const spec of attrs) {
      if (rules.includes('relations') && spec.type === 'relation' && spec.target !== undefined) {
        const exists = this.stmt(`SELECT 1 FROM ${tableIdent(spec.target)} WHERE id = ?`);
        for (const r of rows) {
          if (!Object.hasOwn(r.parsed.values, spec.name)) continue;
          const v = r.parsed.values[spec.name];
          const ids = v === null || v === undefined ? [] : Array.isArray(v) ? (v as string[]) : [v as string];
          const missing = ids.filter((id) => !(spec.target === o.name && batchIds.has(id)) && exists.get(id) === undefined);
          if (missing.length > 0) {
            errors.push({ path: [...r.path, spec.name], message: `${spec.name} names ${spec.target} record${missing.length === 1 ? '' : 's'} that do not exist: ${missing.slice(0, 5).join(', ')}` });
          }
        }
      }
      if (rules.includes('unique') && spec.unique) {
        const taken = this.stmt(`SELECT id FROM ${tableIdent(o.name)} WHERE ${sqlIdent(spec.name)} = ? AND id <> ? LIMIT 1`);
        const inBatch = new Map<SqlValue, number>();
        const at = columnIndex(o, spec.name);
        let writers: Set<string> | undefined;
        rows.forEach((r, i) => {
          const c = r.parsed.columns[at];
          if (c === undefined || c === null) return;
          const other = inBatch.get(c);
          if (other !== undefined) {
            errors.push({ path: [...r.path, spec.name], message: `${spec.name} must be unique: item ${other} of this batch has the same value` });
            return;
          }
          inBatch.set(c, i);
          const hit = taken.get(c, r.id) as { id: string } | undefined;
          // The batch's end state judges: a holder in the batch gives the value up only if it writes this attribute.
          const givenUp = hit !== undefined && batchIds.has(hit.id) && (writers ??= new Set(rows.filter((x) => x.parsed.columns[at] !== undefined).map((x) => x.id))).has(hit.id);
          if (hit && !givenUp) {
            errors.push({ path: [...r.path, spec.name], message: `${spec.name} must be unique: record ${hit.id} already has this value` });
          }
        });
      }
    }
    return errors;
  }

  /**
   * The files engineer's hook (issue 5): document ids must be this slot's documents. Every
   * document slot of the write goes in one call, so the files engine judges the write as a
   * whole (one document named by two items is refused, not moved from one to the other).
   */
  private checkDocumentValues(o: StoredObject, rows: readonly { id: string; parsed: ParsedRow; path: (string | number)[] }[]): FieldError[] {
    if (!this.files || !o.attributes.some((a) => a.type === 'document')) return [];
    const slots: DocumentSlot[] = [];
    const specs = userAttributes(o).filter((a) => a.type === 'document');
    for (const r of rows) {
      for (const spec of specs) {
        if (Object.hasOwn(r.parsed.values, spec.name)) slots.push({ recordId: r.id, spec, value: r.parsed.values[spec.name], path: [...r.path, spec.name] });
      }
    }
    return slots.length > 0 ? this.files.applyDocumentValues(o.name, slots) : [];
  }

  private insertStatement(o: StoredObject): { stmt: Statement; names: string[] } {
    const names = userAttributes(o).map((a) => a.name);
    const cols = ['id', 'version', 'created_at', 'updated_at', 'created_by', ...names];
    const sql = `INSERT INTO ${tableIdent(o.name)} (${cols.map((c) => sqlIdent(c)).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
    return { stmt: this.stmt(sql), names };
  }

  private writeCreates(o: StoredObject, bodies: unknown[], actor: Actor, bulk: boolean): RecordOut[] {
    // Parallel arrays, and item paths built only when a rule needs them: a 10,000-record
    // bulk-create keeps no wrapper or path per record alive through the request (young-GC
    // copies every live object, so per-record garbage that survives is what costs).
    const n = bodies.length;
    const ids = new Array<string>(n);
    const parsed = new Array<ParsedRow>(n);
    let errors: FieldError[] | undefined;
    for (let i = 0; i < n; i++) {
      ids[i] = randomUUID();
      const p = parseRecordBody(o, bodies[i], 'create', bulk ? ['records', i] : []);
      parsed[i] = p;
      if (p.errors.length > 0) (errors ??= []).push(...p.errors);
    }
    let view: StoredRuleRow[] | undefined;
    const rows = (): StoredRuleRow[] => (view ??= ids.map((id, i) => ({ id, parsed: parsed[i]!, path: bulk ? ['records', i] : [] })));
    const attrs = userAttributes(o);
    // Every bad attribute is reported (issue 3): the stored rules (relation targets, unique)
    // run on the values that did parse, and both lists answer together.
    if (errors) throw validationFailed(mergeErrors(errors, this.checkStoredRules(o, rows())));
    // Unique values are left to the unique indexes on the fast path; a violation rolls the
    // batch back and the checks below run on the untouched table to name every offender.
    // Relation targets are checked here, unique or not: no index knows whether they exist.
    let uniqueHit = false;
    try {
      return this.tx(() => {
        // Invariant (relation existence): checked inside the write transaction that inserts,
        // so a target deleted meanwhile is seen (see writeUpdates for what a backend owes).
        if (hasStoredRules(attrs, ['relations'])) {
          const stored = this.checkStoredRules(o, rows(), ['relations']);
          // Every bad attribute is reported (contract.md §3, unique included): once the batch
          // is refused anyway, the unique values the index would have judged are checked too.
          // Only here, on the error path, so a clean batch pays for no unique lookups.
          if (stored.length > 0) throw validationFailed(mergeErrors(stored, this.checkStoredRules(o, rows(), ['unique'])));
        }
        const { stmt, names } = this.insertStatement(o);
        const t = now();
        const by = actor.keyId;
        const width = names.length;
        const params: SqlValue[] = new Array<SqlValue>(5 + width);
        params[1] = 1;
        params[2] = t;
        params[3] = t;
        params[4] = by;
        // The search index: one set-based pass after the loop, not a trigger per row (fulltext.ts).
        const index = bulkInsertIndex(this.db, o, ids);
        for (let r = 0; r < n; r++) {
          const columns = parsed[r]!.columns;
          params[0] = ids[r]!;
          for (let i = 0; i < width; i++) params[5 + i] = columns[i] ?? null;
          try {
            // Spread, not the array: better-sqlite3 binds positional arguments ~10% faster.
            stmt.run(...params);
          } catch (err) {
            if (classifySqliteError(err) === 'unique') uniqueHit = true;
            throw err;
          }
        }
        index.finish();
        // Most objects have no document attribute: no 10,000 empty lists to build and merge.
        if (this.files && o.attributes.some((a) => a.type === 'document')) {
          const docErrors = this.checkDocumentValues(o, rows());
          if (docErrors.length > 0) throw validationFailed(docErrors);
        }
        // A create sets every attribute (sent, default or null) in attribute order
        // (parseRecordBody), so the parsed values are the record's values, not copied. The
        // document hook cannot change them afterwards: a document is taken from a record only
        // when another slot names it, and one id named twice in the batch is refused.
        const out = new Array<RecordOut>(n);
        for (let r = 0; r < n; r++) out[r] = { id: ids[r]!, object: o.name, version: 1, createdAt: t, updatedAt: t, values: parsed[r]!.values };
        return out;
      });
    } catch (err) {
      if (!uniqueHit) throw err;
      const named = this.checkStoredRules(o, rows(), ['unique']);
      throw named.length > 0 ? validationFailed(named) : err;
    }
  }

  createRecord(object: string, values: Record<string, unknown>, actor: Actor): RecordOut {
    return this.writeCreates(this.recordObject(object), [values], actor, false)[0]!;
  }

  bulkCreate(object: string, records: Record<string, unknown>[], actor: Actor): RecordOut[] {
    const o = this.recordObject(object);
    checkBatch(records, 'records', MAX_BULK_WRITE);
    return this.writeCreates(o, records, actor, true);
  }

  private writeUpdates(o: StoredObject, items: { id: string; ifMatch: number | '*'; values: unknown }[], bulk: boolean): RecordOut[] {
    // Each row's path is where its values sit in the body (`records[i].values` in a batch).
    const rows = items.map((item, i) => {
      const path = bulk ? ['records', i, 'values'] : [];
      return { id: item.id, ifMatch: item.ifMatch, parsed: parseRecordBody(o, item.values, 'update', path), path };
    });
    const errors = rows.flatMap((r) => r.parsed.errors);
    // As for creates: the stored rules run on what parsed, so every bad attribute is named.
    if (errors.length > 0) throw validationFailed(mergeErrors(errors, this.checkStoredRules(o, rows)));
    const seen = new Set<string>();
    rows.forEach((r, i) => {
      if (seen.has(r.id)) throw validationFailed([{ path: ['records', i, 'id'], message: `record ${r.id} is listed twice` }]);
      seen.add(r.id);
    });
    return this.tx(() => {
      const before = rows.map((r, i) => {
        const item = bulk ? `records[${i}]` : undefined;
        const row = this.requireRow(o, r.id, item);
        // Invariant (if-match): the version is read and the row written in one write
        // transaction, so no other write can move it in between (BEGIN IMMEDIATE here; on a
        // backend with concurrent writers, SELECT … FOR UPDATE or SERIALIZABLE, port.ts).
        if (r.ifMatch !== '*' && r.ifMatch !== row.version) {
          throw new ServiceError('SCHEMA_CONFLICT', `${item ? `${item}: ` : ''}Record ${r.id} is at version ${row.version}, not ${r.ifMatch}; read it again and retry`, {
            fix: 'GET the record for its current version (etag) and send that in if-match',
          });
        }
        return row;
      });
      // Invariants (relation existence, batch unique): the rows checked here are the rows the
      // writes meet, because the check and the writes share one write transaction and no
      // other writer runs meanwhile (BEGIN IMMEDIATE); the unique indexes back the check up.
      // A backend with concurrent writers must also lock the target rows (FOR KEY SHARE) or
      // run SERIALIZABLE, and rely on its unique index for values (port.ts).
      const stored = this.checkStoredRules(o, rows);
      if (stored.length > 0) throw validationFailed(stored);
      const t = now();
      const out: RecordOut[] = [];
      const attrs = userAttributes(o);
      // The search index: one set-based pass after the writes when they change text (fulltext.ts).
      const writesText = rows.some((r) => r.parsed.columns.some((c, i) => c !== undefined && isTextLike(attrs[i]!)));
      const index = bulkUpdateIndex(this.db, o, rows.map((r) => r.id), writesText);
      // A unique index checks each UPDATE alone, but the batch is judged on its end state
      // (contract.md §3, all or nothing), which checkStoredRules has just found valid: rows
      // that change a unique value let go of the old one first (several NULLs are allowed),
      // so a swap or a rotation inside the batch cannot collide halfway. One row alone
      // never collides with itself.
      if (rows.length > 1) {
        attrs.forEach((a, at) => {
          if (!a.unique) return;
          let release: Statement | undefined;
          rows.forEach((r, i) => {
            const c = r.parsed.columns[at];
            const old = before[i]![a.name];
            if (c === undefined || old === null || old === undefined || c === old) return;
            (release ??= this.stmt(`UPDATE ${tableIdent(o.name)} SET ${sqlIdent(a.name)} = NULL WHERE id = ?`)).run(r.id);
          });
        });
      }
      rows.forEach((r) => {
        const names: string[] = [];
        const set: SqlValue[] = [];
        r.parsed.columns.forEach((c, i) => {
          if (c === undefined) return;
          names.push(attrs[i]!.name);
          set.push(c);
        });
        const sql = `UPDATE ${tableIdent(o.name)} SET version = version + 1, updated_at = ?${names.map((n) => `, ${sqlIdent(n)} = ?`).join('')} WHERE id = ?`;
        try {
          this.stmt(sql).run(t, ...set, r.id);
        } catch (err) {
          // Not expected once the checks above passed (the old values were let go); kept so a
          // collision they missed is still a 400 naming the item, not a 500.
          if (classifySqliteError(err) !== 'unique') throw err;
          const unique = userAttributes(o).filter((a) => a.unique && names.includes(a.name)).map((a) => a.name);
          throw validationFailed(unique.map((n) => ({ path: [...r.path, n], message: `${n} must be unique: another record holds this value while the batch applies` })));
        }
      });
      index.finish();
      const docErrors = this.checkDocumentValues(o, rows);
      if (docErrors.length > 0) throw validationFailed(docErrors);
      for (const r of rows) out.push(this.toRecord(o, this.requireRow(o, r.id)));
      return out;
    });
  }

  updateRecord(object: string, id: string, patch: Record<string, unknown>, ifMatch: number | '*', _actor: Actor): RecordOut {
    return this.writeUpdates(this.recordObject(object), [{ id, ifMatch, values: patch }], false)[0]!;
  }

  bulkUpdate(object: string, items: BulkUpdateItem[], _actor: Actor): RecordOut[] {
    const o = this.recordObject(object);
    checkBatch(items, 'records', MAX_BULK_WRITE);
    items.forEach((item, i) => checkUuid(item.id, ['records', i, 'id']));
    return this.writeUpdates(o, items.map((item) => ({ id: item.id, ifMatch: item.version ?? '*', values: item.values })), true);
  }

  deleteRecord(object: string, id: string): { id: string } {
    const o = this.recordObject(object);
    this.tx(() => {
      this.requireRow(o, id);
      this.deleteRows(o, [id]);
    });
    return { id };
  }

  bulkDelete(object: string, ids: string[]): { deleted: number } {
    const o = this.recordObject(object);
    checkBatch(ids, 'ids', MAX_BULK);
    ids.forEach((id, i) => checkUuid(id, ['ids', i]));
    return this.tx(() => {
      ids.forEach((id, i) => this.requireRow(o, id, `ids[${i}]`));
      const unique = [...new Set(ids)];
      this.deleteRows(o, unique);
      return { deleted: unique.length };
    });
  }

  /**
   * Deleting records others link to clears those links (a single relation becomes null, the
   * id leaves a list) and bumps each linking record's version once, so nothing points at a
   * missing record. A required relation left empty refuses the whole delete (409).
   * The rows go first, inside the transaction: a record that links to another being deleted
   * (a self relation) is then no longer there to be checked or cleared, however many there are.
   */
  private deleteRows(o: StoredObject, ids: string[]): void {
    // The ids bound once as a JSON list: one statement per linking object, whatever the count.
    const gone = { gone: JSON.stringify(ids), t: now() };
    const goneSet = '(SELECT value FROM json_each(@gone))';
    this.stmt(`DELETE FROM ${tableIdent(o.name)} WHERE id IN ${goneSet}`).run(gone);
    for (const other of this.objects().values()) {
      const links = other.attributes.filter((a) => a.type === 'relation' && a.target === o.name);
      if (links.length === 0) continue;
      const table = tableIdent(other.name);
      const hit = (a: AttributeSpec): string => {
        const col = sqlIdent(a.name);
        return a.multiple ? `EXISTS (SELECT 1 FROM json_each(${col}) WHERE value IN ${goneSet})` : `${col} IN ${goneSet}`;
      };
      for (const a of links.filter((l) => l.required)) {
        const col = sqlIdent(a.name);
        // A list is left empty when none of its ids survive.
        const emptied = a.multiple ? `${hit(a)} AND NOT EXISTS (SELECT 1 FROM json_each(${col}) WHERE value NOT IN ${goneSet})` : hit(a);
        const rows = this.stmt(`SELECT id FROM ${table} WHERE ${emptied} LIMIT 6`).all(gone) as { id: string }[];
        if (rows.length > 0) {
          const which = `${rows.slice(0, 5).map((r) => r.id).join(', ')}${rows.length > 5 ? ', …' : ''}`;
          throw new ServiceError('SCHEMA_CONFLICT', `The required ${other.name}.${a.name} of ${which} links only to records being deleted; change those first`);
        }
      }
      // One UPDATE for all of this object's links to o, so a record linking through two
      // attributes moves one version. A list keeps its order, without the deleted ids.
      const sets = links.map((a) => {
        const col = sqlIdent(a.name);
        const cleared = a.multiple
          ? `NULLIF((SELECT json_group_array(value ORDER BY key) FROM json_each(${col}) WHERE value NOT IN ${goneSet}), '[]')`
          : 'NULL';
        return `${col} = CASE WHEN ${hit(a)} THEN ${cleared} ELSE ${col} END`;
      });
      this.stmt(`UPDATE ${table} SET ${sets.join(', ')}, version = version + 1, updated_at = @t WHERE ${links.map(hit).join(' OR ')}`).run(gone);
    }
    this.files?.deleteRecordDocuments(o.name, ids);
  }

  search(object: string, input: SearchInput): SearchPage {
    const o = this.recordObject(object);
    return searchRecords(this, o, input);
  }

  // ------------------------------------------------------------------ idempotency, keys

  /** A read: the index is current with every committed write (fulltext.ts says why). */
  globalSearch(input: GlobalSearchInput): GlobalSearchHit[] {
    return runFulltext(this.db, input);
  }

  recallIdempotent(scope: string, key: string, bodyHash: string): IdempotentAnswer | undefined {
    return this.idempotency.recall(scope, key, bodyHash);
  }

  rememberIdempotent(scope: string, key: string, bodyHash: string, answer: IdempotentAnswer): void {
    this.idempotency.remember(scope, key, bodyHash, answer);
  }

  createKey(input: { name: string; role: string; scopes?: Scope[] | null }): { key: KeyOut; secret: string } {
    return this.keys.create(input);
  }

  listKeys(): KeyOut[] {
    return this.keys.list();
  }

  revokeKey(id: string): void {
    this.keys.revoke(id);
  }

  authenticate(secret: string): Actor | null {
    return this.keys.authenticate(secret);
  }

  countActiveKeys(): number {
    return this.keys.countActive();
  }

  keysVersion(): number {
    return this.keys.version();
  }

  // ------------------------------------------------------------------ custom roles

  listRoles(): StoredRole[] {
    return listRoles(this.db);
  }

  findRole(name: string): StoredRole | undefined {
    return findRole(this.db, name);
  }

  /** POST /roles: a runtime role over stored objects. */
  createRole(name: string, decl: RoleDecl): StoredRole {
    refuseBuiltin(name);
    checkRoleName(name);
    return this.tx(() => {
      if (findRole(this.db, name)) throw new ServiceError('SCHEMA_CONFLICT', `A role named "${name}" already exists; change it with PUT /roles/${name}`);
      checkPermissionObjects(decl, [...this.objects().keys()]);
      upsertRole(this.db, name, decl, { kind: 'runtime' });
      return findRole(this.db, name)!;
    });
  }

  /** PUT /roles/:id: replaces a runtime role's definition. */
  putRole(name: string, decl: RoleDecl): StoredRole {
    refuseBuiltin(name);
    return this.tx(() => {
      const role = findRole(this.db, name);
      if (!role) throw roleNotFound(name);
      refuseSourceOwned(role);
      checkPermissionObjects(decl, [...this.objects().keys()]);
      upsertRole(this.db, name, decl, role.owner);
      return findRole(this.db, name)!;
    });
  }

  deleteRole(name: string): void {
    refuseBuiltin(name);
    this.tx(() => {
      const role = findRole(this.db, name);
      if (!role) throw roleNotFound(name);
      refuseSourceOwned(role);
      refuseIfKeysHold(this.db, name);
      dropRole(this.db, name);
    });
  }

  // ------------------------------------------------------------------ views, sources, sync

  listViews(): StoredView[] {
    return loadViews(this.db);
  }

  findView(name: string): StoredView | undefined {
    return this.listViews().find((v) => v.name === name);
  }

  putView(name: string, decl: ViewDecl): StoredView {
    return this.tx(() => putRuntimeView(this, name, checkRuntimeView(name, decl, this.listObjects())));
  }

  deleteView(name: string): void {
    this.tx(() => deleteRuntimeView(this, name));
  }

  /** A view's page: its filter and sort with the caller's limit and cursor, values cut to its columns. */
  runView(name: string, page: { limit?: number; cursor?: string }): SearchPage & { view: StoredView } {
    const view = this.findView(name);
    if (!view) throw viewNotFound(name);
    const result = this.search(view.object, {
      ...(view.filter ? { filter: view.filter } : {}),
      ...(view.sort ? { sort: view.sort } : {}),
      ...page,
    });
    const columns = view.columns;
    if (columns) {
      for (const r of result.records) r.values = Object.fromEntries(columns.filter((c) => Object.hasOwn(r.values, c)).map((c) => [c, r.values[c]]));
    }
    return { ...result, view };
  }

  /** Parsed declarations by source, reused while (version, appliedAt) is unchanged: a big one takes ms to parse. */
  private sources = new Map<string, StoredSource>();

  findSource(id: string): StoredSource | undefined {
    const head = this.meta('SELECT version, applied_at FROM _ss_sources WHERE id = ?').get(id) as { version: number; applied_at: string | null } | undefined;
    if (!head) return undefined;
    const cached = this.sources.get(id);
    if (cached && cached.version === head.version && cached.appliedAt === head.applied_at) return shallowSource(cached);
    const row = this.meta('SELECT declaration FROM _ss_sources WHERE id = ?').get(id) as { declaration: string };
    const source: StoredSource = { id, version: head.version, appliedAt: head.applied_at, declaration: JSON.parse(row.declaration) as Declaration };
    this.sources.set(id, source);
    return shallowSource(source);
  }

  sourceHistory(id: string, options: { limit?: number; cursor?: string } = {}): HistoryPage {
    return this.history.list(id, options);
  }

  /** After a push that handed its declaration over (PushOptions.handOver): findSource answers with it. */
  rememberSource(id: string, declaration: Declaration): void {
    const head = this.meta('SELECT version, applied_at FROM _ss_sources WHERE id = ?').get(id) as { version: number; applied_at: string | null } | undefined;
    if (head) this.sources.set(id, { id, version: head.version, appliedAt: head.applied_at, declaration });
  }

  facts(): DataFacts {
    return sqlFacts(this.db, () => this.objects());
  }

  pushSource(id: string, declaration: Declaration, options: PushOptions): PushResult {
    return pushSource(this, id, declaration, options);
  }

  /** Used by pushSource: apply inside the caller's transaction. */
  applyPlanNow = (plan: Parameters<typeof applyPlan>[1], sourceId: string, declaration: Declaration): number => applyPlan(this, plan, sourceId, declaration);

  /** A transaction that drops the schema cache afterwards (plan application). */
  schemaTransaction<T>(fn: () => T): T {
    return this.schemaTx(fn);
  }
}

/** Callers get their own top-level object; the declaration inside is shared and treated as read-only. */
function shallowSource(s: StoredSource): StoredSource {
  return { ...s };
}

/**
 * Parse errors and stored-rule errors as one list; in a bulk body ordered by item index
 * (`["records", i, …]`), so a client reads each item's problems together.
 */
function mergeErrors(parsed: FieldError[], stored: FieldError[]): FieldError[] {
  const item = (e: FieldError): number => (e.path[0] === 'records' && typeof e.path[1] === 'number' ? e.path[1] : -1);
  return [...parsed, ...stored].sort((a, b) => item(a) - item(b));
}

function checkBatch(list: unknown, field: string, max: number): void {
  if (!Array.isArray(list) || list.length === 0 || list.length > max) {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', `${field} must list 1 to ${max} items`, {
      errors: [{ path: [field], message: `must list 1 to ${max} items` }],
    });
  }
}

function checkUuid(id: unknown, path: (string | number)[]): void {
  if (typeof id !== 'string' || !UUID.test(id)) {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', `${JSON.stringify(id)} is not a record id (a UUID)`, { errors: [{ path, message: 'must be a UUID' }] });
  }
}
