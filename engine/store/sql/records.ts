import { ServiceError, type FieldError } from '../../errors.js';
import { isUuid, newId } from '../../model/ids.js';
import { MAX_BULK, MAX_BULK_WRITE } from '../../model/limits.js';
import { sqlIdent } from '../../model/names.js';
import type { RecordOut, StoredObject } from '../../model/stored.js';
import type { Executor, Param } from '../port.js';
import type { Actor, BulkUpdateItem } from '../types.js';
import { roleAllowsRecord } from '../../model/roles.js';
import type { Core } from './context.js';
import { applyDocumentSlots } from './document-slots.js';
import type { DocumentSlot } from './file-rules.js';
import { tableIdent } from './idents.js';
import { checkRelations, checkStoredRules, checkUnique, deleteRows, hasRelationRules, type RuleRow } from './record-rules.js';
import { now } from './time.js';
import { parseRecordBody, userAttributes, validationFailed, type ParsedRow } from './values.js';
import { holdsDocuments } from '../../model/types/registry.js';

/**
 * Record writes and reads (contract.md §3 "Records"): create, update with if-match, delete,
 * and their bulk forms, each all or nothing inside the caller's write transaction. The
 * rules they keep live in record-rules.ts; documents are the documents module's: a write
 * hands it its document slots as data and rewrites the records a document moved away from
 * itself (document-slots.ts), so no call goes from documents back into a record write.
 */


interface RecordRow {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
  created_by: string | null;
  [column: string]: unknown;
}

export function toRecord(core: Core, o: StoredObject, row: RecordRow): RecordOut {
  const values: Record<string, unknown> = {};
  for (const a of o.attributes) {
    if (a.system) continue;
    const v = row[a.name];
    values[a.name] = v === null || v === undefined ? null : core.codecs[a.type].decode(v, a);
  }
  return { id: row.id, object: o.name, version: Number(row.version), createdAt: row.created_at, updatedAt: row.updated_at, values };
}

async function readRow(ex: Executor, o: StoredObject, id: string): Promise<RecordRow | undefined> {
  return ex.get<RecordRow>(`SELECT * FROM ${tableIdent(o.name)} WHERE id = ?`, [id]);
}

/**
 * `item` names the bulk item ("records[1]", "ids[3]"): a 404 carries no `errors` list
 * (service-interface.md Envelope: errors only for body validation), so the message says
 * which item it was (issue 3: bulk errors name the item index).
 */
async function requireRow(ex: Executor, o: StoredObject, id: string, item?: string): Promise<RecordRow> {
  const row = await readRow(ex, o, id);
  if (!row) throw new ServiceError('SCHEMA_RECORD_NOT_FOUND', `${item ? `${item}: ` : ''}Record ${id} of "${o.name}" does not exist`);
  return row;
}

export async function getRecord(core: Core, ex: Executor, o: StoredObject, id: string): Promise<RecordOut> {
  return toRecord(core, o, await requireRow(ex, o, id));
}

/**
 * The documents hook (issue 5): document ids must be this slot's documents. Every document
 * slot of the write goes in one call, after its rows are written and before the answer is
 * read back, so the documents module judges the write as a whole (one document named by two
 * items is refused, not moved from one to the other).
 */
async function checkDocumentValues(core: Core, tx: Executor, o: StoredObject, rows: readonly RuleRow[], actor: Actor): Promise<FieldError[]> {
  if (!core.files || !o.attributes.some(holdsDocuments)) return [];
  const slots: DocumentSlot[] = [];
  const specs = userAttributes(o).filter(holdsDocuments);
  for (const r of rows) {
    for (const spec of specs) {
      if (Object.hasOwn(r.parsed.values, spec.name)) slots.push({ recordId: r.id, spec, value: r.parsed.values[spec.name], path: [...r.path, spec.name] });
    }
  }
  if (slots.length === 0) return [];
  return applyDocumentSlots(tx, core.files.documents, o.name, slots, (name) => core.catalog.find(tx, name), core.codecs.document, mayUpdateRecordsOf(actor));
}

/**
 * Whether the writer may change records of an object: a write that names a document of
 * another record takes it from that record, which a custom role may do only where it may
 * update (the route checked this object; the other one is the document's). Built-in roles
 * that reach a record write may update every object.
 */
const mayUpdateRecordsOf =
  (actor: Actor) =>
  (object: string): boolean =>
    actor.grants === undefined || roleAllowsRecord(actor.grants, 'update', object);

/** What a create needs before its transaction: bodies parsed (no I/O), ids drawn. */
export interface PreparedCreates {
  o: StoredObject;
  ids: string[];
  parsed: ParsedRow[];
  bulk: boolean;
  rows(): RuleRow[];
}

export function prepareCreates(core: Core, o: StoredObject, bodies: readonly unknown[], bulk: boolean): { prepared: PreparedCreates; errors?: FieldError[] } {
  // Parallel arrays, and item paths built only when a rule needs them: a 10,000-record
  // bulk-create keeps no wrapper or path per record alive through the request (young-GC
  // copies every live object, so per-record garbage that survives is what costs).
  const n = bodies.length;
  const ids = new Array<string>(n);
  const parsed = new Array<ParsedRow>(n);
  let errors: FieldError[] | undefined;
  for (let i = 0; i < n; i++) {
    ids[i] = newId();
    const p = parseRecordBody(core.codecs, o, bodies[i], 'create', bulk ? ['records', i] : []);
    parsed[i] = p;
    if (p.errors.length > 0) (errors ??= []).push(...p.errors);
  }
  let view: RuleRow[] | undefined;
  const rows = (): RuleRow[] => (view ??= ids.map((id, i) => ({ id, parsed: parsed[i]!, path: bulk ? ['records', i] : [] })));
  return { prepared: { o, ids, parsed, bulk, rows }, ...(errors ? { errors } : {}) };
}

/**
 * The creates, inside the caller's transaction. Parse errors were found before; the stored
 * rules run on the values that did parse, and both lists answer together (every bad
 * attribute is reported, issue 3). Unique values are left to the unique indexes on the fast
 * path; a violation rolls the batch back and `nameUniqueOffenders` (outside it) names them.
 */
export async function writeCreates(core: Core, tx: Executor, p: PreparedCreates, parseErrors: FieldError[] | undefined, actor: Actor): Promise<RecordOut[]> {
  const { o, ids, parsed } = p;
  if (parseErrors) throw validationFailed(mergeErrors(parseErrors, await checkStoredRules(tx, o, p.rows())));
  // Invariant (relation existence): checked inside the write transaction that inserts, so a
  // target deleted meanwhile is seen (record-rules.ts says what a backend owes).
  if (hasRelationRules(o)) {
    const stored = await checkRelations(tx, o, p.rows());
    // Every bad attribute is reported (contract.md §3, unique included): once the batch is
    // refused anyway, the unique values the index would have judged are checked too. Only
    // here, on the error path, so a clean batch pays for no unique lookups.
    if (stored.length > 0) throw validationFailed(mergeErrors(stored, await checkUnique(tx, o, p.rows())));
  }
  const names = userAttributes(o).map((a) => a.name);
  const cols = createColumns(o);
  const sql = `INSERT INTO ${tableIdent(o.name)} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
  const t = now();
  const n = ids.length;
  const width = names.length;
  // One parameter array reused for every row (Executor.runBatch reads each before the next):
  // no await and no array per row on the 10,000-record path.
  const params = new Array<Param>(5 + width);
  params[1] = 1;
  params[2] = t;
  params[3] = t;
  params[4] = actor.keyId;
  function* rows(): Generator<readonly Param[]> {
    for (let r = 0; r < n; r++) {
      const columns = parsed[r]!.columns;
      params[0] = ids[r]!;
      for (let i = 0; i < width; i++) params[5 + i] = columns[i] ?? null;
      yield params;
    }
  }
  // The search index: the backend may index the batch in one pass after it (FulltextPort.beginWrite).
  const index = await core.fulltext.beginWrite(tx, o, { kind: 'create', ids, attributes: names });
  await tx.runBatch(sql, rows());
  await index.finish();
  // Most objects have no document attribute: no 10,000 empty lists to build and merge.
  if (core.files && o.attributes.some(holdsDocuments)) {
    const docErrors = await checkDocumentValues(core, tx, o, p.rows(), actor);
    if (docErrors.length > 0) throw validationFailed(docErrors);
  }
  // A create sets every attribute (sent, default or null) in attribute order
  // (parseRecordBody), so the parsed values are the record's values, not copied. The
  // document hook cannot change them afterwards: a document is taken from a record only
  // when another slot names it, and one id named twice in the batch is refused.
  const out = new Array<RecordOut>(n);
  for (let r = 0; r < n; r++) out[r] = createdRecord(o, ids[r]!, t, parsed[r]!);
  return out;
}

/**
 * The columns a create writes, quoted, in the order its row binds them: the system columns
 * id, version, created_at, updated_at, created_by, then the object's attributes in order
 * (ParsedRow.columns).
 */
export function createColumns(o: StoredObject): string[] {
  return ['id', 'version', 'created_at', 'updated_at', 'created_by', ...userAttributes(o).map((a) => a.name)].map((c) => sqlIdent(c));
}

/** A created record as a create answers it: version 1, the parsed values (every attribute, in order). */
export function createdRecord(o: StoredObject, id: string, t: string, parsed: ParsedRow): RecordOut {
  return { id, object: o.name, version: 1, createdAt: t, updatedAt: t, values: parsed.values };
}

/** After a create refused by a unique index (and rolled back): every offender, named, or undefined. */
export async function nameUniqueOffenders(ex: Executor, p: PreparedCreates): Promise<ServiceError | undefined> {
  const named = await checkUnique(ex, p.o, p.rows());
  return named.length > 0 ? validationFailed(named) : undefined;
}

export interface UpdateItem {
  id: string;
  ifMatch: number | '*';
  values: unknown;
}

/**
 * Bodies parsed and checked by the object's schema before anything is written (no I/O). It
 * runs inside the write transaction, against the schema that transaction reads, so a push
 * landing meanwhile cannot leave a body checked against the schema before it; the cost is
 * CPU while the write holds the queue (a 10,000-record bulk parses for a few ms of it).
 */
export function prepareUpdates(core: Core, o: StoredObject, items: readonly UpdateItem[], bulk: boolean): (RuleRow & { ifMatch: number | '*' })[] {
  // Each row's path is where its values sit in the body (`records[i].values` in a batch).
  return items.map((item, i) => {
    const path = bulk ? ['records', i, 'values'] : [];
    return { id: item.id, ifMatch: item.ifMatch, parsed: parseRecordBody(core.codecs, o, item.values, 'update', path), path };
  });
}

export async function writeUpdates(core: Core, tx: Executor, o: StoredObject, rows: readonly (RuleRow & { ifMatch: number | '*' })[], bulk: boolean, actor: Actor): Promise<RecordOut[]> {
  const errors = rows.flatMap((r) => r.parsed.errors);
  // As for creates: the stored rules run on what parsed, so every bad attribute is named.
  if (errors.length > 0) throw validationFailed(mergeErrors(errors, await checkStoredRules(tx, o, rows)));
  const seen = new Set<string>();
  rows.forEach((r, i) => {
    if (seen.has(r.id)) throw validationFailed([{ path: ['records', i, 'id'], message: `record ${r.id} is listed twice` }]);
    seen.add(r.id);
  });
  const before: RecordRow[] = [];
  for (const [i, r] of rows.entries()) {
    const item = bulk ? `records[${i}]` : undefined;
    const row = await requireRow(tx, o, r.id, item);
    // Invariant (if-match): the version is read and the row written in one write
    // transaction, so no other write can move it in between (SQLite: BEGIN IMMEDIATE; a
    // backend with concurrent writers: SERIALIZABLE, or SELECT … FOR UPDATE here, port.ts).
    if (r.ifMatch !== '*' && r.ifMatch !== Number(row.version)) {
      throw new ServiceError('SCHEMA_CONFLICT', `${item ? `${item}: ` : ''}Record ${r.id} is at version ${row.version}, not ${r.ifMatch}; read it again and retry`, {
        fix: 'GET the record for its current version (etag) and send that in if-match',
      });
    }
    before.push(row);
  }
  // Invariants (relation existence, batch unique): record-rules.ts.
  const stored = await checkStoredRules(tx, o, rows);
  if (stored.length > 0) throw validationFailed(stored);
  const t = now();
  const attrs = userAttributes(o);
  const table = tableIdent(o.name);
  // The search index: the backend may index the batch in one pass after it (FulltextPort.beginWrite).
  const written = attrs.filter((_a, i) => rows.some((r) => r.parsed.columns[i] !== undefined)).map((a) => a.name);
  const index = await core.fulltext.beginWrite(tx, o, { kind: 'update', ids: rows.map((r) => r.id), attributes: written });
  // A unique index checks each UPDATE alone, but the batch is judged on its end state
  // (contract.md §3, all or nothing), which the rules have just found valid: rows that
  // change a unique value let go of the old one first (several NULLs are allowed), so a
  // swap or a rotation inside the batch cannot collide halfway. One row alone never
  // collides with itself.
  if (rows.length > 1) {
    for (const [at, a] of attrs.entries()) {
      if (!a.unique) continue;
      for (const [i, r] of rows.entries()) {
        const c = r.parsed.columns[at];
        const old = before[i]![a.name];
        if (c === undefined || old === null || old === undefined || c === old) continue;
        await tx.run(`UPDATE ${table} SET ${sqlIdent(a.name)} = NULL WHERE id = ?`, [r.id]);
      }
    }
  }
  for (const r of rows) {
    const names: string[] = [];
    const set: Param[] = [];
    r.parsed.columns.forEach((c, i) => {
      if (c === undefined) return;
      names.push(attrs[i]!.name);
      set.push(c);
    });
    const sql = `UPDATE ${table} SET version = version + 1, updated_at = ?${names.map((n) => `, ${sqlIdent(n)} = ?`).join('')} WHERE id = ?`;
    try {
      await tx.run(sql, [t, ...set, r.id]);
    } catch (err) {
      // Not expected once the checks above passed (the old values were let go); kept so a
      // collision they missed is still a 400 naming the item, not a 500.
      if (core.backend.driver.classify(err) !== 'unique') throw err;
      const unique = attrs.filter((a) => a.unique && names.includes(a.name)).map((a) => a.name);
      throw validationFailed(unique.map((n) => ({ path: [...r.path, n], message: `${n} must be unique: another record holds this value while the batch applies` })));
    }
  }
  await index.finish();
  const docErrors = await checkDocumentValues(core, tx, o, rows, actor);
  if (docErrors.length > 0) throw validationFailed(docErrors);
  const out: RecordOut[] = [];
  for (const r of rows) out.push(toRecord(core, o, await requireRow(tx, o, r.id)));
  return out;
}

export function checkBulkUpdate(items: BulkUpdateItem[]): UpdateItem[] {
  checkBatch(items, 'records', MAX_BULK_WRITE);
  items.forEach((item, i) => checkUuid(item.id, ['records', i, 'id']));
  return items.map((item) => ({ id: item.id, ifMatch: item.version ?? '*', values: item.values }));
}

export async function deleteRecord(core: Core, tx: Executor, o: StoredObject, id: string): Promise<void> {
  await requireRow(tx, o, id);
  await deleteRows(core, tx, o, [id]);
}

export function checkBulkDelete(ids: string[]): void {
  checkBatch(ids, 'ids', MAX_BULK);
  ids.forEach((id, i) => checkUuid(id, ['ids', i]));
}

export async function bulkDelete(core: Core, tx: Executor, o: StoredObject, ids: string[]): Promise<{ deleted: number }> {
  for (const [i, id] of ids.entries()) await requireRow(tx, o, id, `ids[${i}]`);
  const unique = [...new Set(ids)];
  await deleteRows(core, tx, o, unique);
  return { deleted: unique.length };
}

/**
 * Parse errors and stored-rule errors as one list; in a bulk body ordered by item index
 * (`["records", i, …]`), so a client reads each item's problems together.
 */
function mergeErrors(parsed: FieldError[], stored: FieldError[]): FieldError[] {
  const item = (e: FieldError): number => (e.path[0] === 'records' && typeof e.path[1] === 'number' ? e.path[1] : -1);
  return [...parsed, ...stored].sort((a, b) => item(a) - item(b));
}

export function checkBatch(list: unknown, field: string, max: number): void {
  if (!Array.isArray(list) || list.length === 0 || list.length > max) {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', `${field} must list 1 to ${max} items`, {
      errors: [{ path: [field], message: `must list 1 to ${max} items` }],
    });
  }
}

function checkUuid(id: unknown, path: (string | number)[]): void {
  if (!isUuid(id)) {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', `${JSON.stringify(id)} is not a record id (a UUID)`, { errors: [{ path, message: 'must be a UUID' }] });
  }
}
