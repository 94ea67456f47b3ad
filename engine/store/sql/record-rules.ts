import { ServiceError, type FieldError } from '../../errors.js';
import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import type { Executor, Param } from '../port.js';
import type { Core } from './context.js';
import { tableIdent } from './idents.js';
import { now } from './time.js';
import { columnIndex, userAttributes, type ParsedRow } from './values.js';
import { relationTarget } from '../../model/types/registry.js';

/**
 * The store-side record rules (contract.md §3): relation values name records that exist,
 * unique values are free (against stored rows and within the batch), and deleting records
 * clears the links to them. Errors are collected, not thrown, so every bad attribute is
 * reported at once.
 *
 * Invariants (relation existence, batch unique): the callers run these checks in the same
 * write transaction as the writes they guard, so the rows checked are the rows the writes
 * meet. SQLite serialises write transactions (BEGIN IMMEDIATE), so no other writer runs in
 * between; the unique indexes back the unique check up. A backend with concurrent writers
 * must run the transaction SERIALIZABLE (a target deleted by a concurrent transaction then
 * conflicts with this one's read of it, and one of the two is retried) or lock the target
 * rows it read (SELECT … FOR KEY SHARE), and rely on its unique index for values.
 */

/** A record as the rules see it: its id, parsed values and item path. */
export interface RuleRow {
  id: string;
  parsed: ParsedRow;
  path: (string | number)[];
}

const hasRelations = (attrs: readonly AttributeSpec[]): boolean => attrs.some((a) => relationTarget(a) !== undefined);
const hasUnique = (attrs: readonly AttributeSpec[]): boolean => attrs.some((a) => a.unique);

/** Whether the object has any store-side rule: most batches have none, and skip the id set. */
function hasStoredRules(o: StoredObject): boolean {
  const attrs = userAttributes(o);
  return hasRelations(attrs) || hasUnique(attrs);
}

export function hasRelationRules(o: StoredObject): boolean {
  return hasRelations(userAttributes(o));
}

/** Both rules, in attribute order (relations then unique per attribute, as one list). */
export async function checkStoredRules(ex: Executor, o: StoredObject, rows: readonly RuleRow[]): Promise<FieldError[]> {
  if (!hasStoredRules(o)) return [];
  const errors: FieldError[] = [];
  const batchIds = new Set(rows.map((r) => r.id));
  for (const spec of userAttributes(o)) {
    errors.push(...(await relationErrors(ex, o, spec, rows, batchIds)), ...(await uniqueErrors(ex, o, spec, rows, batchIds)));
  }
  return errors;
}

/** Relation targets exist (a record of the same batch counts for a self relation). */
export async function checkRelations(ex: Executor, o: StoredObject, rows: readonly RuleRow[]): Promise<FieldError[]> {
  if (!hasRelationRules(o)) return [];
  const batchIds = new Set(rows.map((r) => r.id));
  const errors: FieldError[] = [];
  for (const spec of userAttributes(o)) errors.push(...(await relationErrors(ex, o, spec, rows, batchIds)));
  return errors;
}

/** Unique values are free, judged on the batch's end state. */
export async function checkUnique(ex: Executor, o: StoredObject, rows: readonly RuleRow[]): Promise<FieldError[]> {
  if (!hasUnique(userAttributes(o))) return [];
  const batchIds = new Set(rows.map((r) => r.id));
  const errors: FieldError[] = [];
  for (const spec of userAttributes(o)) errors.push(...(await uniqueErrors(ex, o, spec, rows, batchIds)));
  return errors;
}

async function relationErrors(ex: Executor, o: StoredObject, spec: AttributeSpec, rows: readonly RuleRow[], batchIds: Set<string>): Promise<FieldError[]> {
  const target = relationTarget(spec);
  if (target === undefined) return [];
  const errors: FieldError[] = [];
  const exists = `SELECT 1 AS x FROM ${tableIdent(target)} WHERE id = ?`;
  for (const r of rows) {
    if (!Object.hasOwn(r.parsed.values, spec.name)) continue;
    const v = r.parsed.values[spec.name];
    const ids = v === null || v === undefined ? [] : Array.isArray(v) ? (v as string[]) : [v as string];
    const missing: string[] = [];
    for (const id of ids) {
      if (target === o.name && batchIds.has(id)) continue;
      if ((await ex.get(exists, [id])) === undefined) missing.push(id);
    }
    if (missing.length > 0) {
      errors.push({ path: [...r.path, spec.name], message: `${spec.name} names ${target} record${missing.length === 1 ? '' : 's'} that do not exist: ${missing.slice(0, 5).join(', ')}` });
    }
  }
  return errors;
}

async function uniqueErrors(ex: Executor, o: StoredObject, spec: AttributeSpec, rows: readonly RuleRow[], batchIds: Set<string>): Promise<FieldError[]> {
  if (!spec.unique) return [];
  const errors: FieldError[] = [];
  const taken = `SELECT id FROM ${tableIdent(o.name)} WHERE ${sqlIdent(spec.name)} = ? AND id <> ? LIMIT 1`;
  const inBatch = new Map<Param, number>();
  const at = columnIndex(o, spec.name);
  let writers: Set<string> | undefined;
  for (const [i, r] of rows.entries()) {
    const c = r.parsed.columns[at];
    if (c === undefined || c === null) continue;
    const other = inBatch.get(c);
    if (other !== undefined) {
      errors.push({ path: [...r.path, spec.name], message: `${spec.name} must be unique: item ${other} of this batch has the same value` });
      continue;
    }
    inBatch.set(c, i);
    const hit = await ex.get<{ id: string }>(taken, [c, r.id]);
    // The batch's end state judges: a holder in the batch gives the value up only if it writes this attribute.
    const givenUp = hit !== undefined && batchIds.has(hit.id) && (writers ??= new Set(rows.filter((x) => x.parsed.columns[at] !== undefined).map((x) => x.id))).has(hit.id);
    if (hit && !givenUp) {
      errors.push({ path: [...r.path, spec.name], message: `${spec.name} must be unique: record ${hit.id} already has this value` });
    }
  }
  return errors;
}

/**
 * Deleting records others link to clears those links (a single relation becomes null, the
 * id leaves a list) and bumps each linking record's version once, so nothing points at a
 * missing record. A required relation left empty refuses the whole delete (409).
 * The rows go first, inside the transaction: a record that links to another being deleted
 * (a self relation) is then no longer there to be checked or cleared, however many there are.
 * The ids are bound once as a JSON list (Dialect.jsonListSet): one statement per linking
 * object, whatever the count.
 */
export async function deleteRows(core: Core, tx: Executor, o: StoredObject, ids: readonly string[]): Promise<void> {
  const d = core.dialect;
  const gone = JSON.stringify(ids);
  const goneSet = d.jsonListSet('?');
  await tx.run(`DELETE FROM ${tableIdent(o.name)} WHERE id IN ${goneSet}`, [gone]);
  for (const other of (await core.catalog.objects(tx)).values()) {
    const links = other.attributes.filter((a) => relationTarget(a) === o.name);
    if (links.length === 0) continue;
    const table = tableIdent(other.name);
    // Each condition binds the list once per set it names; `binds` counts them in SQL order.
    const hit = (a: AttributeSpec): { sql: string; sets: number } =>
      a.multiple ? { sql: d.listHasAnyIn(sqlIdent(a.name), goneSet), sets: 1 } : { sql: `${sqlIdent(a.name)} IN ${goneSet}`, sets: 1 };
    for (const a of links.filter((l) => l.required)) {
      const col = sqlIdent(a.name);
      // A list is left empty when none of its ids survive.
      const h = hit(a);
      const emptied = a.multiple ? { sql: `${h.sql} AND ${d.listAllIn(col, goneSet)}`, sets: 2 } : h;
      const rows = await tx.all<{ id: string }>(`SELECT id FROM ${table} WHERE ${emptied.sql} LIMIT 6`, new Array<string>(emptied.sets).fill(gone));
      if (rows.length > 0) {
        const which = `${rows.slice(0, 5).map((r) => r.id).join(', ')}${rows.length > 5 ? ', …' : ''}`;
        throw new ServiceError('SCHEMA_CONFLICT', `The required ${other.name}.${a.name} of ${which} links only to records being deleted; change those first`);
      }
    }
    // One UPDATE for all of this object's links to o, so a record linking through two
    // attributes moves one version. A list keeps its order, without the deleted ids.
    const params: Param[] = [];
    const sets = links.map((a) => {
      const col = sqlIdent(a.name);
      const h = hit(a);
      const cleared = a.multiple ? d.listWithout(col, goneSet) : 'NULL';
      params.push(gone, ...(a.multiple ? [gone] : []));
      return `${col} = CASE WHEN ${h.sql} THEN ${cleared} ELSE ${col} END`;
    });
    params.push(now());
    const where = links.map((a) => hit(a).sql);
    for (let i = 0; i < links.length; i++) params.push(gone);
    await tx.run(`UPDATE ${table} SET ${sets.join(', ')}, version = version + 1, updated_at = ? WHERE ${where.join(' OR ')}`, params);
  }
  await core.files?.documents.deleteRecordDocuments(tx, o.name, ids);
}
