import type { ObjectDecl } from '../model/declaration.js';
import { objectNameProblem } from '../model/names.js';
import { isOwnedBySource, ownerText, type StoredObject } from '../model/stored.js';
import { sameValue } from './compare.js';
import * as msg from './messages.js';
import type { Conflict, FieldChange } from './types.js';

/**
 * Ownership of objects (contract.md §3, issue 4): the source owns what it declared;
 * core, bundle and other sources' objects are SCHEMA_DUPLICATE_OBJECT. A runtime object
 * the declaration names is adopted (the source takes it over, keeping its records and
 * its undeclared runtime attributes) — unless a declared attribute clashes with a
 * runtime one, which the attribute diff reports as SCHEMA_SYNC_CONFLICT. Adoption is a
 * `change_object` step with an `owner` field change, so the store knows to re-own it.
 */
export { ownerText };

/** Only the source's own objects are dropped when no longer declared (contract.md §3). */
export function ownsObject(o: StoredObject, sourceId: string): boolean {
  return isOwnedBySource(o.owner, sourceId);
}

/** The conflict that stops the source from declaring `o` as `name`, if any. */
export function ownershipConflict(o: StoredObject, name: string, sourceId: string): Conflict | undefined {
  if (o.owner.kind === 'runtime') return undefined;
  if (isOwnedBySource(o.owner, sourceId)) return undefined;
  return { code: 'SCHEMA_DUPLICATE_OBJECT', target: name, rule: 'ownership', ...msg.ownedElsewhere('object', name, ownerText(o.owner)) };
}

export function nameConflict(name: string): Conflict | undefined {
  const p = objectNameProblem(name);
  if (!p) return undefined;
  return { code: p.code as Conflict['code'], target: name, message: p.message };
}

export function objectChanges(o: StoredObject, decl: ObjectDecl, sourceId: string): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const f of ['label', 'description'] as const) {
    const a = o[f] === '' ? undefined : o[f];
    const b = decl[f] === '' ? undefined : decl[f];
    if (!sameValue(a, b)) changes.push({ field: f, from: a, to: b });
  }
  if (o.owner.kind === 'runtime') changes.push({ field: 'owner', from: 'runtime', to: `source ${sourceId}` });
  return changes;
}
