import { randomUUID } from 'node:crypto';
import { ServiceError } from '../../errors.js';
import type { AttributeSpec } from '../../model/attribute.js';
import { SYSTEM_SPECS } from '../../model/names.js';
import { objectNameProblem } from '../../model/names.js';
import type { Owner, StoredObject } from '../../model/stored.js';
import type { Executor } from '../port.js';
import { checkAttributeInput } from '../schema-input.js';
import type { CreateObjectInput } from '../types.js';
import { specJson } from './catalog-rows.js';
import type { Core } from './context.js';
import { tableIdent } from './idents.js';
import { forgetObjectAnswers } from './idempotency.js';
import { renameObjectInRoles } from './roles.js';
import { intColumn } from './rows.js';
import { now } from './time.js';
import { refuseIfViewsRead, renameObjectInViews } from './views.js';
import { relationTarget } from '../../model/types/registry.js';

/**
 * Objects in the schema catalog (`_ss_objects`, `_ss_attributes`) and their record tables:
 * the schema routes (POST/DELETE /schema/objects) and the plan applier's object steps. Every
 * function runs inside the caller's write transaction; the catalog view (catalog.ts) follows
 * each change so the next step of the same transaction reads it.
 */

/** POST /schema/objects: the input checked before the transaction, then one insert. */
export function checkCreateObject(input: CreateObjectInput): AttributeSpec[] {
  const problem = objectNameProblem(input.name);
  if (problem) throw new ServiceError(problem.code, problem.message, { errors: [{ path: ['name'], message: problem.message }] });
  const specs = (input.attributes ?? []).map((a, i) => checkAttributeInput(a, ['attributes', i]));
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.name)) throw new ServiceError('SCHEMA_DUPLICATE_ATTRIBUTE', `Attribute "${s.name}" is listed twice for object "${input.name}"`);
    seen.add(s.name);
  }
  return specs;
}

/** Meta rows, table, indexes, search index. Shared by the route and the plan applier. */
export async function insertObject(
  core: Core,
  tx: Executor,
  name: string,
  info: { label?: string | undefined; description?: string | undefined },
  specs: AttributeSpec[],
  owner: Owner,
): Promise<void> {
  if ((await core.catalog.objects(tx)).has(name)) {
    throw new ServiceError('SCHEMA_DUPLICATE_OBJECT', `Object "${name}" already exists`);
  }
  for (const s of specs) await checkRelationTarget(core, tx, s, name);
  const id = randomUUID();
  const t = now();
  const position = intColumn(await tx.get('SELECT COALESCE(MAX(position), 0) + 1 AS p FROM _ss_objects'), 'p');
  await tx.run(
    'INSERT INTO _ss_objects (id, name, label, description, owner_kind, owner_id, protected, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)',
    [id, name, info.label ?? null, info.description ?? null, owner.kind, owner.id ?? null, position, t, t],
  );
  for (const [i, s] of SYSTEM_SPECS.entries()) await insertAttributeRow(tx, id, s, i, { kind: 'core' }, true);
  await core.ddl.createRecordTable(tx, name, specs);
  for (const [i, s] of specs.entries()) {
    const attrId = await insertAttributeRow(tx, id, s, i, owner, false);
    await core.ddl.syncIndex(tx, name, attrId, s, true);
  }
  await core.catalog.objectChanged(tx, id);
  await core.fulltext.afterAttributeChange(tx, await core.catalog.require(tx, name), undefined, undefined);
}

export async function insertAttributeRow(tx: Executor, objectId: string, spec: AttributeSpec, position: number, owner: Owner, system: boolean): Promise<string> {
  const id = randomUUID();
  const t = now();
  await tx.run(
    'INSERT INTO _ss_attributes (id, object_id, name, spec, position, protected, system, owner_kind, owner_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [id, objectId, spec.name, specJson(spec), position, system ? 1 : 0, system ? 1 : 0, owner.kind, owner.id ?? null, t, t],
  );
  return id;
}

export async function checkRelationTarget(core: Core, tx: Executor, spec: AttributeSpec, self: string): Promise<void> {
  const target = relationTarget(spec);
  if (target === undefined) return;
  if (target !== self && !(await core.catalog.objects(tx)).has(target)) {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', `Relation "${spec.name}" targets object "${spec.target}", which does not exist`, {
      errors: [{ path: ['target'], message: `object "${spec.target}" does not exist` }],
    });
  }
}

/** DELETE /schema/objects/:id: the route's refusals, then the drop. */
export async function deleteObject(core: Core, tx: Executor, idOrName: string, options: { force?: boolean }): Promise<void> {
  const o = await core.catalog.require(tx, idOrName);
  if (o.protected) throw new ServiceError('SCHEMA_PROTECTED_OBJECT', `Object "${o.name}" is protected and cannot be deleted`);
  const refs = await core.catalog.referencesTo(tx, o.name);
  if (refs.length > 0) {
    throw new ServiceError('SCHEMA_OBJECT_REFERENCED', `Object "${o.name}" is referenced by ${refs.join(', ')}`, {
      fix: `delete or retarget ${refs.join(', ')} first`,
    });
  }
  await refuseIfViewsRead(tx, o.name);
  const count = await countRecords(tx, o.name);
  if (count > 0 && !options.force) {
    throw new ServiceError('SCHEMA_CONFLICT', `Object "${o.name}" holds ${count} record${count === 1 ? '' : 's'}; delete with force=true to drop them`, {
      fix: 'DELETE /schema/objects/:id?force=true',
    });
  }
  await dropObject(core, tx, o);
}

/** Documents, search entries, remembered answers, meta rows and the table. */
export async function dropObject(core: Core, tx: Executor, o: StoredObject): Promise<void> {
  await core.fulltext.dropObject(tx, o.name);
  await forgetObjectAnswers(tx, o.name);
  await core.files?.documents.deleteSchemaDocuments(tx, o.name);
  await tx.run('DELETE FROM _ss_attributes WHERE object_id = ?', [o.id]);
  await tx.run('DELETE FROM _ss_objects WHERE id = ?', [o.id]);
  await core.ddl.dropRecordTable(tx, o.name);
  await core.catalog.dropped(tx, o.name);
}

/**
 * The plan's rename_object: the table, the catalog row, and every link by name (relation
 * targets, views, roles, document slots, search entries) follow, in this transaction.
 */
export async function renameObject(core: Core, tx: Executor, from: string, to: string): Promise<void> {
  const o = await core.catalog.require(tx, from);
  await core.fulltext.beforeSchemaChange(tx, from);
  await core.ddl.renameRecordTable(tx, from, to);
  await tx.run('UPDATE _ss_objects SET name = ?, updated_at = ? WHERE id = ?', [to, now(), o.id]);
  // Relation targets are read from the catalog (every object's attributes), not by JSON
  // functions in SQL, which differ between databases; the spec text is rewritten whole.
  for (const other of (await core.catalog.objects(tx)).values()) {
    for (const a of other.attributes) {
      if (relationTarget(a) !== from) continue;
      const row = await tx.get<{ spec: string }>('SELECT spec FROM _ss_attributes WHERE id = ?', [a.id]);
      if (!row) continue;
      const spec = JSON.parse(row.spec) as Record<string, unknown>;
      spec['target'] = to;
      await tx.run('UPDATE _ss_attributes SET spec = ? WHERE id = ?', [JSON.stringify(spec), a.id]);
    }
  }
  await forgetObjectAnswers(tx, from);
  await renameObjectInViews(tx, from, to);
  await renameObjectInRoles(tx, from, to);
  await core.files?.documents.renameSchemaObject(tx, from, to);
  await core.catalog.changedMany(tx);
  await core.fulltext.afterObjectRename(tx, from, await core.catalog.require(tx, to));
}

/** The plan's change_object: label and description, and the owner taking it. */
export async function changeObjectInfo(core: Core, tx: Executor, object: string, info: { label: string | null; description: string | null }, owner: Owner): Promise<void> {
  const o = await core.catalog.require(tx, object);
  await tx.run('UPDATE _ss_objects SET label = ?, description = ?, owner_kind = ?, owner_id = ?, updated_at = ? WHERE id = ?', [
    info.label,
    info.description,
    owner.kind,
    owner.id ?? null,
    now(),
    o.id,
  ]);
  await core.catalog.objectChanged(tx, o.id);
}

export async function countRecords(ex: Executor, object: string): Promise<number> {
  return intColumn(await ex.get(`SELECT COUNT(*) AS n FROM ${tableIdent(object)}`), 'n');
}
