import { renameRoleObject, type RoleDecl } from '../model/roles.js';
import { renameOf, withoutRenamedFrom } from '../model/renames.js';
import { claimedBySource, ownerText, type StoredRole } from '../model/stored.js';
import { compact, sameValue } from './compare.js';
import * as msg from './messages.js';
import type { Conflict, FieldChange, Step } from './types.js';

/**
 * Custom roles in a push (contract.md §2 `roles:`, issue 16): planned with the objects and
 * views and applied in the same transaction and source version. Ownership as for views: a
 * runtime role of the same name is adopted, one owned by another source is SCHEMA_DUPLICATE.
 * Roles hold no data, so no role step is destructive; dropping one that active keys hold is
 * a conflict instead, and `renamedFrom` keeps the keys under the new name.
 */
export interface PlannedRole extends StoredRole {
  /** Active keys holding the role. */
  keys: readonly { id: string; name: string }[];
}

const ROLE_FIELDS = ['label', 'description', 'schema', 'permissions'] as const;

export function roleDecl(r: StoredRole): RoleDecl {
  const { name: _n, owner: _o, ...rest } = r;
  return declOf(rest);
}

/** A role as compared (planner, drift, plan --diff): no sync hint, the schema default spelled out. */
export const declOf = (d: RoleDecl): RoleDecl => {
  const rest = withoutRenamedFrom(d);
  return compact({ ...rest, schema: rest.schema ?? 'none' } as RoleDecl);
};

const mine = (r: StoredRole, sourceId: string, previously: ReadonlySet<string>): boolean => claimedBySource(r.owner, r.name, sourceId, previously);

export function diffRoles(
  sourceId: string,
  declared: Record<string, RoleDecl>,
  stored: readonly PlannedRole[],
  previouslyDeclared: ReadonlySet<string>,
  /** Object renames of this push (old → new): a declared permission naming the old name follows (contract.md §2). */
  renamedObjects: ReadonlyMap<string, string> = new Map(),
): { steps: Step[]; conflicts: Conflict[] } {
  const steps: Step[] = [];
  const conflicts: Conflict[] = [];
  const byName = new Map(stored.map((r) => [r.name, r]));
  const renamedAway = new Set<string>();
  for (const [name, raw] of Object.entries(declared)) {
    const target = `role:${name}`;
    let to = declOf(raw);
    for (const [from, into] of renamedObjects) to = renameRoleObject(to, from, into) ?? to;
    let cur = byName.get(name);
    const oldName = renameOf(name, raw, declared);
    const from = oldName !== undefined ? byName.get(oldName) : undefined;
    if (from && !cur && (from.owner.kind === 'runtime' || mine(from, sourceId, previouslyDeclared))) {
      steps.push({ action: 'rename_role', target, from: from.name, to: name, destructive: false, label: 'change', reason: `keeps its ${from.keys.length} key${from.keys.length === 1 ? '' : 's'}` });
      renamedAway.add(from.name);
      cur = { ...from, name };
    } else if (from && cur) {
      conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target, rule: 'rename_clash', ...msg.renameClash('role', target, `role:${from.name}`) });
      continue;
    }
    if (!cur) {
      steps.push({ action: 'create_role', target, role: name, decl: to, destructive: false, label: 'additive' });
      continue;
    }
    if (cur.owner.kind !== 'runtime' && !mine(cur, sourceId, previouslyDeclared)) {
      conflicts.push({ code: 'SCHEMA_DUPLICATE', target, rule: 'ownership', ...msg.ownedElsewhere('role', target, ownerText(cur.owner)) });
      continue;
    }
    const was = roleDecl(cur);
    const changes: FieldChange[] = ROLE_FIELDS.filter((f) => !sameValue(was[f], to[f])).map((f) => ({ field: f, from: was[f], to: to[f] }));
    const adopt = cur.owner.kind === 'runtime';
    if (changes.length === 0 && !adopt) continue;
    steps.push({
      action: 'change_role', target, role: name, from: was, to, changes, destructive: false, label: 'change',
      ...(adopt ? { reason: 'adopts the runtime role' } : {}),
    });
  }
  for (const r of stored) {
    if (Object.hasOwn(declared, r.name) || renamedAway.has(r.name) || !mine(r, sourceId, previouslyDeclared)) continue;
    const target = `role:${r.name}`;
    if (r.keys.length > 0) {
      conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target, rule: 'role_keys', ...msg.roleHeldByKeys(r.name, r.keys) });
      continue;
    }
    steps.push({ action: 'drop_role', target, role: r.name, destructive: false, label: 'change', reason: 'no longer declared' });
  }
  return { steps, conflicts };
}

/**
 * Roles this declaration does not define that grant on an object the plan drops: a later
 * object of that name would silently inherit the grant, so the push is refused (as a view
 * that reads a dropped object is). Object renames are not conflicts: the applier rewrites
 * every stored role's permissions (engine/store/roles.ts).
 */
export function roleReferenceConflicts(steps: readonly Step[], stored: readonly PlannedRole[], declared: Record<string, RoleDecl>): Conflict[] {
  const dropped = new Set(steps.flatMap((s) => (s.action === 'drop_object' ? [s.object] : [])));
  if (dropped.size === 0) return [];
  const droppedRoles = new Set(steps.flatMap((s) => (s.action === 'drop_role' ? [s.role] : s.action === 'rename_role' ? [s.from] : [])));
  const out: Conflict[] = [];
  for (const r of stored) {
    if (Object.hasOwn(declared, r.name) || droppedRoles.has(r.name)) continue;
    for (const object of new Set(r.permissions.map((p) => p.object))) {
      if (dropped.has(object)) out.push({ code: 'SCHEMA_SYNC_CONFLICT', target: `role:${r.name}`, rule: 'role_reference', ...msg.roleUses(r.name, ownerText(r.owner), object) });
    }
  }
  return out;
}
