import { declares, type ViewDecl } from '../model/declaration.js';
import { claimedBySource, isOwnedBySource, ownerText, type StoredView } from '../model/stored.js';
import { viewAttributes } from '../model/view-refs.js';
import { compact, sameValue } from './compare.js';
import * as msg from './messages.js';
import type { Conflict, FieldChange, Step } from './types.js';

/**
 * Views (contract.md §3: a view pushed by a source is owned by it; one owned by another
 * source → SCHEMA_DUPLICATE). A runtime view of the same name is adopted, like runtime
 * objects. Views never hold data, so no view step is destructive.
 */
const VIEW_FIELDS = ['object', 'label', 'description', 'filter', 'sort', 'columns'] as const;

export function viewDecl(v: StoredView): ViewDecl {
  const { name: _n, owner: _o, ...rest } = v;
  return compact(rest as ViewDecl);
}

export function diffViews(
  sourceId: string,
  declared: Record<string, ViewDecl>,
  stored: StoredView[],
  previouslyDeclared: ReadonlySet<string>,
): { creates: Step[]; changes: Step[]; drops: Step[]; conflicts: Conflict[] } {
  const out = { creates: [] as Step[], changes: [] as Step[], drops: [] as Step[], conflicts: [] as Conflict[] };
  const byName = new Map(stored.map((v) => [v.name, v]));
  for (const [name, decl] of Object.entries(declared)) {
    const target = `view:${name}`;
    const cur = byName.get(name);
    const to = compact({ ...decl });
    if (!cur) {
      out.creates.push({ action: 'create_view', target, view: name, decl: to, destructive: false, label: 'additive' });
      continue;
    }
    const owner = cur.owner;
    if (owner.kind !== 'runtime' && !isOwnedBySource(owner, sourceId)) {
      out.conflicts.push({ code: 'SCHEMA_DUPLICATE', target, rule: 'ownership', ...msg.ownedElsewhere('view', target, ownerText(owner)) });
      continue;
    }
    const from = viewDecl(cur);
    // after an object rename the stored view still names the old object: an `object` change
    const changes: FieldChange[] = [];
    for (const f of VIEW_FIELDS) {
      if (!sameValue(from[f], to[f])) changes.push({ field: f, from: from[f], to: to[f] });
    }
    const adopt = owner.kind === 'runtime';
    if (changes.length === 0 && !adopt) continue;
    out.changes.push({
      action: 'change_view', target, view: name, from, to, changes, destructive: false, label: 'change',
      ...(adopt ? { reason: 'adopts the runtime view' } : {}),
    });
  }
  for (const v of stored) {
    if (declares(declared, v.name)) continue;
    if (!claimedBySource(v.owner, v.name, sourceId, previouslyDeclared)) continue;
    out.drops.push({ action: 'drop_view', target: `view:${v.name}`, view: v.name, destructive: false, label: 'change', reason: 'no longer declared' });
  }
  return out;
}

/**
 * Views this declaration does not replace (runtime views, other sources' views) that read
 * an object or attribute the plan drops: SCHEMA_SYNC_CONFLICT, so no push leaves a view
 * broken. Renames are not conflicts: the applier rewrites the views that name the old
 * name (engine/store/views.ts), keeping their owner. Declared views were already checked
 * against the declared objects by validation.
 */
export function viewReferenceConflicts(steps: readonly Step[], stored: StoredView[], declared: Record<string, ViewDecl>): Conflict[] {
  const renamedObject = new Map<string, string>();
  const droppedObjects = new Set<string>();
  const droppedAttributes = new Set<string>();
  for (const s of steps) {
    if (s.action === 'rename_object') renamedObject.set(s.from, s.to);
    else if (s.action === 'drop_object') droppedObjects.add(s.object);
    else if (s.action === 'drop_attribute') droppedAttributes.add(`${s.object}.${s.attribute}`);
  }
  if (droppedObjects.size === 0 && droppedAttributes.size === 0) return [];
  const droppedViews = new Set(steps.filter((s) => s.action === 'drop_view').map((s) => (s as { view: string }).view));
  const out: Conflict[] = [];
  for (const v of stored) {
    if (Object.hasOwn(declared, v.name) || droppedViews.has(v.name)) continue;
    const object = renamedObject.get(v.object) ?? v.object;
    const owner = ownerText(v.owner);
    const hits = droppedObjects.has(object) ? [object] : [...viewAttributes(v)].map((a) => `${object}.${a}`).filter((t) => droppedAttributes.has(t));
    for (const target of hits) {
      out.push({ code: 'SCHEMA_SYNC_CONFLICT', target: `view:${v.name}`, rule: 'view_reference', ...msg.viewUses(v.name, owner, target) });
    }
  }
  return out;
}
