import type { AttributeSpec } from '../../model/attribute.js';
import type { Owner, OwnerKind, StoredAttribute, StoredObject, StoredView } from '../../model/stored.js';
import type { ViewDecl } from '../../model/declaration.js';
import type { Executor } from '../port.js';
import { withoutRenamedFrom } from '../../model/renames.js';

/**
 * Reading the meta layer into the shared model types (engine/model/stored.ts). The store
 * keeps one cached copy of every object (catalog.ts) and refreshes it after schema writes.
 */

export interface ObjectRow {
  id: string;
  name: string;
  label: string | null;
  description: string | null;
  owner_kind: string;
  owner_id: string | null;
  protected: number;
  position: number;
  created_at: string;
  updated_at: string;
}

export interface AttributeRow {
  id: string;
  object_id: string;
  name: string;
  spec: string;
  position: number;
  protected: number;
  system: number;
  owner_kind: string;
  owner_id: string | null;
  created_at: string;
  updated_at: string;
}

export function ownerOf(kind: string, id: string | null): Owner {
  return id === null ? { kind: kind as OwnerKind } : { kind: kind as OwnerKind, id };
}

function toAttribute(r: AttributeRow): StoredAttribute {
  const spec = JSON.parse(r.spec) as AttributeSpec;
  return {
    ...spec,
    name: r.name,
    id: r.id,
    protected: r.protected === 1,
    system: r.system === 1,
    owner: ownerOf(r.owner_kind, r.owner_id),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Every object, or only the one with `objectId` (a schema write refreshes just its object). */
export async function loadObjects(ex: Executor, objectId?: string): Promise<Map<string, StoredObject>> {
  const objects =
    objectId === undefined
      ? await ex.all<ObjectRow>('SELECT * FROM _ss_objects ORDER BY position, name')
      : await ex.all<ObjectRow>('SELECT * FROM _ss_objects WHERE id = ?', [objectId]);
  const attrs =
    objectId === undefined
      ? await ex.all<AttributeRow>('SELECT * FROM _ss_attributes ORDER BY system DESC, position')
      : await ex.all<AttributeRow>('SELECT * FROM _ss_attributes WHERE object_id = ? ORDER BY system DESC, position', [objectId]);
  return toObjects(objects, attrs);
}

/** Catalog rows (objects by position, attributes system first then by position) → the model's objects. */
export function toObjects(objects: readonly ObjectRow[], attrs: readonly AttributeRow[]): Map<string, StoredObject> {
  const byObject = new Map<string, StoredAttribute[]>();
  for (const a of attrs) {
    const list = byObject.get(a.object_id) ?? [];
    list.push(toAttribute(a));
    byObject.set(a.object_id, list);
  }
  const out = new Map<string, StoredObject>();
  for (const o of objects) {
    const obj: StoredObject = {
      id: o.id,
      name: o.name,
      owner: ownerOf(o.owner_kind, o.owner_id),
      protected: o.protected === 1,
      attributes: byObject.get(o.id) ?? [],
      createdAt: o.created_at,
      updatedAt: o.updated_at,
    };
    if (o.label !== null) obj.label = o.label;
    if (o.description !== null) obj.description = o.description;
    out.set(o.name, obj);
  }
  return out;
}

interface ViewRow {
  name: string;
  decl: string;
  owner_kind: string;
  owner_id: string | null;
}

export async function loadViews(ex: Executor): Promise<StoredView[]> {
  const rows = await ex.all<ViewRow>('SELECT * FROM _ss_views ORDER BY name');
  return rows.map((r) => ({ ...(JSON.parse(r.decl) as ViewDecl), name: r.name, owner: ownerOf(r.owner_kind, r.owner_id) }));
}

/** The spec as stored in `_ss_attributes.spec`: AddAttributeInput without name or renamedFrom. */
export function specJson(spec: AttributeSpec): string {
  const clean: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(withoutRenamedFrom(spec))) if (v !== undefined) clean[k] = v;
  return JSON.stringify(clean);
}

export function specOfStored(a: StoredAttribute): AttributeSpec {
  const { id: _i, protected: _p, system: _s, owner: _o, createdAt: _c, updatedAt: _u, ...spec } = a;
  return spec;
}

/** Defined with the types (search filters need it too); re-exported for the store. */
export { isMultiValued } from '../../model/types/registry.js';
