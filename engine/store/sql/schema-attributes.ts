import { ServiceError } from '../../errors.js';
import type { AttributePatch, AttributeSpec } from '../../model/attribute.js';
import { quoteName } from '../../model/names.js';
import type { Owner, StoredAttribute, StoredObject } from '../../model/stored.js';
import { afterBackfill } from '../../plan/facts.js';
import { violationMessage } from '../../plan/messages.js';
import type { Executor } from '../port.js';
import { checkAttributeInput, mergeAttributePatch } from '../schema-input.js';
import { backfillDefault } from './backfill.js';
import { isMultiValued, specJson, specOfStored } from './catalog-rows.js';
import type { Core } from './context.js';
import { violations } from './probe.js';
import { intColumn } from './rows.js';
import { checkRelationTarget, insertAttributeRow } from './schema-objects.js';
import { now } from './time.js';
import { refuseIfViewsRead, renameAttributeInViews } from './views.js';
import { holdsDocuments, typeDef } from '../../model/types/registry.js';
import { indexKind } from './idents.js';

/**
 * Attributes in the schema catalog and their columns: the schema routes (POST/PUT/DELETE
 * …/attributes) and the plan applier's attribute steps. Every function runs inside the
 * caller's write transaction. The route refuses a change that stored data breaks
 * (`updateAttribute`); the applier applies what the reviewed plan decided (`applyAttributeChange`).
 */

function requireAttribute(o: StoredObject, idOrName: string): StoredAttribute {
  const a = o.attributes.find((x) => x.name === idOrName) ?? o.attributes.find((x) => x.id === idOrName);
  if (!a) throw new ServiceError('SCHEMA_ATTRIBUTE_NOT_FOUND', `Object "${o.name}" has no attribute ${quoteName(idOrName)}`);
  return a;
}

function refuseProtectedObject(o: StoredObject, what: string): void {
  if (o.protected) throw new ServiceError('SCHEMA_PROTECTED_OBJECT', `Object "${o.name}" is protected; its attributes cannot ${what}`);
}

/** POST …/attributes. */
export async function addAttribute(core: Core, tx: Executor, object: string, raw: AttributeSpec, owner: Owner): Promise<StoredAttribute> {
  const o = await core.catalog.require(tx, object);
  refuseProtectedObject(o, 'change');
  const spec = checkAttributeInput(raw);
  await insertAttribute(core, tx, o.name, spec, owner);
  return requireAttribute(await core.catalog.require(tx, o.name), spec.name);
}

/** Meta row, column, default fill, data check, index, search index. */
export async function insertAttribute(core: Core, tx: Executor, object: string, spec: AttributeSpec, owner: Owner): Promise<void> {
  const o = await core.catalog.require(tx, object);
  if (o.attributes.some((a) => a.name === spec.name)) {
    throw new ServiceError('SCHEMA_DUPLICATE_ATTRIBUTE', `Object "${o.name}" already has an attribute "${spec.name}"`);
  }
  await checkRelationTarget(core, tx, spec, o.name);
  const position = intColumn(await tx.get('SELECT COALESCE(MAX(position), 0) + 1 AS p FROM _ss_attributes WHERE object_id = ?', [o.id]), 'p');
  const attrId = await insertAttributeRow(tx, o.id, spec, position, owner, false);
  await core.fulltext.beforeSchemaChange(tx, o.name);
  await core.ddl.addColumn(tx, o.name, spec);
  await core.catalog.objectChanged(tx, o.id);
  // The new column is empty everywhere: every record takes the default, by the one backfill
  // rule (each filled record's version moves, as for a required attribute's backfill).
  await backfillDefault(core, tx, o.name, spec);
  // the default is written above, so there is nothing left to backfill: refuse only
  await refuseViolations(core, tx, o.name, spec, spec);
  await core.ddl.syncIndex(tx, o.name, attrId, spec, true);
  await core.fulltext.afterAttributeChange(tx, await core.catalog.require(tx, o.name), undefined, spec.name);
}

/**
 * 400 SCHEMA_VALIDATION_FAILED naming rule, count and sample ids (issue 3: PUT …/attributes/:id),
 * except what the default backfills (the planner's rule, afterBackfill). Returns whether
 * the change must backfill.
 */
async function refuseViolations(core: Core, tx: Executor, object: string, current: AttributeSpec, next: AttributeSpec): Promise<boolean> {
  const all = await violations(core, tx, object, current, next);
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

/** PUT …/attributes/:id: stored data that breaks the new spec refuses the change. */
export async function updateAttribute(core: Core, tx: Executor, object: string, attribute: string, raw: AttributePatch): Promise<StoredAttribute> {
  const o = await core.catalog.require(tx, object);
  // service-interface.md lists SCHEMA_PROTECTED_OBJECT (403) for PUT …/attributes/:id.
  refuseProtectedObject(o, 'change');
  const a = requireAttribute(o, attribute);
  if (a.system || a.protected) throw new ServiceError('SCHEMA_PROTECTED_ATTRIBUTE', `Attribute "${o.name}.${a.name}" is protected and cannot change`);
  const spec = mergeAttributePatch(specOfStored(a), raw);
  await checkAttributeChange(core, tx, o, a, spec);
  const backfill = await refuseViolations(core, tx, o.name, specOfStored(a), spec);
  await writeAttributeChange(core, tx, o, a, spec, { backfill, owner: a.owner });
  return requireAttribute(await core.catalog.require(tx, o.name), spec.name);
}

/**
 * The plan's rename_attribute / change_attribute: the plan was reviewed and its policy
 * decided (a destructive conversion approved by allowDestructive nulls what cannot
 * convert); `backfill` says whether the default fills the empty values (its plan step).
 */
export async function applyAttributeChange(core: Core, tx: Executor, object: string, name: string, next: AttributeSpec, options: { backfill: boolean; owner?: Owner }): Promise<void> {
  const o = await core.catalog.require(tx, object);
  const a = requireAttribute(o, name);
  await checkAttributeChange(core, tx, o, a, next);
  await writeAttributeChange(core, tx, o, a, next, { backfill: options.backfill, owner: options.owner ?? a.owner });
}

async function checkAttributeChange(core: Core, tx: Executor, o: StoredObject, a: StoredAttribute, next: AttributeSpec): Promise<void> {
  if (next.name !== a.name && o.attributes.some((x) => x.name === next.name)) {
    throw new ServiceError('SCHEMA_DUPLICATE_ATTRIBUTE', `Object "${o.name}" already has an attribute "${next.name}"`);
  }
  await checkRelationTarget(core, tx, next, o.name);
}

/**
 * Whether a change from `current` to `next` needs a new column type (SchemaDdl.changeColumnType):
 * the one rule, which the applier's folding of a push's column changes reads too (column-changes.ts).
 */
export function rebuildsColumn(current: AttributeSpec, next: AttributeSpec): boolean {
  return current.type !== next.type || isMultiValued(current) !== isMultiValued(next) || (typeDef(current.type).reference === 'record' && current.multiple !== next.multiple);
}

/** Rename, type change (column rebuild), constraint change, index, backfill, search index. */
async function writeAttributeChange(core: Core, tx: Executor, o: StoredObject, a: StoredAttribute, next: AttributeSpec, options: { backfill: boolean; owner: Owner }): Promise<void> {
  const current = specOfStored(a);
  await core.fulltext.beforeSchemaChange(tx, o.name);
  if (next.name !== current.name) {
    await core.ddl.renameColumn(tx, o.name, current.name, next.name);
    await renameAttributeInViews(tx, o.name, current.name, next.name);
  }
  // Document rows name their slot by attribute (the documents module): they follow a
  // rename, and go with the values when the attribute stops being a document (issue 5: no orphans).
  if (holdsDocuments(current) && !holdsDocuments(next)) await core.files?.documents.deleteSchemaDocuments(tx, o.name, current.name);
  else if (holdsDocuments(current) && next.name !== current.name) await core.files?.documents.renameSchemaSlot(tx, o.name, current.name, next.name);
  const renamedCurrent = { ...current, name: next.name };
  const needsRebuild = rebuildsColumn(current, next);
  if (needsRebuild) await core.ddl.changeColumnType(tx, o.name, a.id, renamedCurrent, next);
  await tx.run('UPDATE _ss_attributes SET name = ?, spec = ?, owner_kind = ?, owner_id = ?, updated_at = ? WHERE id = ?', [
    next.name,
    specJson(next),
    options.owner.kind,
    options.owner.id ?? null,
    now(),
    a.id,
  ]);
  await core.catalog.objectChanged(tx, o.id);
  // Renames carry the index along (SchemaDdl.renameColumn); only a changed need touches it.
  if (needsRebuild || indexKind(current) !== indexKind(next)) await core.ddl.syncIndex(tx, o.name, a.id, next, needsRebuild);
  if (options.backfill) await backfillDefault(core, tx, o.name, next);
  await core.fulltext.afterAttributeChange(tx, await core.catalog.require(tx, o.name), current.name, next.name);
}

/** DELETE …/attributes/:id: refused while protected or read by views. */
export async function deleteAttribute(core: Core, tx: Executor, object: string, attribute: string): Promise<void> {
  const o = await core.catalog.require(tx, object);
  if (o.protected) throw new ServiceError('SCHEMA_PROTECTED_OBJECT', `Object "${o.name}" is protected; its attributes cannot be deleted`);
  const a = requireAttribute(o, attribute);
  if (a.system || a.protected) throw new ServiceError('SCHEMA_PROTECTED_ATTRIBUTE', `Attribute "${o.name}.${a.name}" is protected and cannot be deleted`);
  await refuseIfViewsRead(tx, o.name, a.name);
  await dropAttribute(core, tx, o.name, a);
}

export async function dropAttribute(core: Core, tx: Executor, object: string, a: StoredAttribute): Promise<void> {
  if (holdsDocuments(a)) await core.files?.documents.deleteSchemaDocuments(tx, object, a.name);
  await core.fulltext.beforeSchemaChange(tx, object);
  await core.ddl.dropColumn(tx, object, a.id, a.name);
  await tx.run('DELETE FROM _ss_attributes WHERE id = ?', [a.id]);
  const o = await core.catalog.require(tx, object);
  await core.catalog.objectChanged(tx, o.id);
  await core.fulltext.afterAttributeChange(tx, await core.catalog.require(tx, object), a.name, undefined);
}
