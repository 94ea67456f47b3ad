import type { AttributeSpec } from './attribute.js';
import type { Declaration, ViewDecl } from './declaration.js';
import type { RoleDecl } from './roles.js';

/**
 * The stored schema as the store holds it and GET /schema/objects returns it. The planner
 * diffs a Declaration against these types; the store, the routes and the SDK share them.
 */
export type OwnerKind = 'core' | 'bundle' | 'source' | 'runtime';

/** contract.md §3: `{ kind: "core" | "bundle" | "source" | "runtime", id? }`. */
export interface Owner {
  kind: OwnerKind;
  id?: string;
}

/** The one ownership rule (contract.md §3): owned by this source, by its id. */
export function isOwnedBySource(owner: Owner, sourceId: string): boolean {
  return owner.kind === 'source' && owner.id === sourceId;
}

/**
 * Whether a push of `sourceId` may change or drop an entity it no longer finds declared
 * (contract.md §3: "objects and attributes the source declared before and no longer
 * declares are dropped"; runtime ones are kept): one the store says the source owns, or one
 * owned by neither a source nor runtime that the source's previous declaration named.
 * Objects, attributes, views and roles alike.
 */
export function claimedBySource(owner: Owner, name: string, sourceId: string, previouslyDeclared: ReadonlySet<string>): boolean {
  if (owner.kind === 'source') return isOwnedBySource(owner, sourceId);
  return owner.kind !== 'runtime' && previouslyDeclared.has(name);
}

/** An owner as messages name it: `source crm`, `bundle core-crm`, `runtime`, `core`. */
export function ownerText(owner: Owner): string {
  return owner.kind === 'source' || owner.kind === 'bundle' ? `${owner.kind} ${owner.id ?? ''}`.trim() : owner.kind;
}

export interface StoredAttribute extends AttributeSpec {
  id: string;
  /** System-protected (service-interface.md Resources rule 1): never changed or dropped. */
  protected: boolean;
  /** One of the system attributes every object has (id, version, created_at …). */
  system: boolean;
  /** Who declared it: the source that owns the object, or runtime (added through the API). */
  owner: Owner;
  createdAt: string;
  updatedAt: string;
}

export interface StoredObject {
  id: string;
  name: string;
  label?: string;
  description?: string;
  owner: Owner;
  protected: boolean;
  /** System attributes first, then the rest in creation order. */
  attributes: StoredAttribute[];
  createdAt: string;
  updatedAt: string;
}

export interface StoredView extends ViewDecl {
  name: string;
  owner: Owner;
}

/** A custom role as stored (contract.md §3 "Roles, keys, views"); built-in roles are described by engine/server/permissions.ts. */
export interface StoredRole extends Omit<RoleDecl, 'renamedFrom'> {
  name: string;
  owner: Owner;
}

export interface StoredSource {
  id: string;
  /** Increments on every applied push; what `if-match` on PUT /schema/sources/:id compares. */
  version: number;
  appliedAt: string | null;
  declaration: Declaration;
}

/** GET /schema/sources/:id: the source and the names of what it owns now (contract.md §3). */
export interface SourceOut extends StoredSource {
  objects: string[];
  views: string[];
  roles: string[];
}

/** The record as every route returns it (contract.md §3). */
export interface RecordOut {
  id: string;
  object: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  values: Record<string, unknown>;
}

/** A stored file as the API answers it (contract.md §3 "Files and documents"). */
export interface FileOut {
  id: string;
  name: string;
  mimeType: string;
  size: number;
  sha256: string;
  uploadedBy: string | null;
  createdAt: string;
}

/** A document: a file attached to one record's document attribute (contract.md §3). */
export interface DocumentOut {
  id: string;
  title: string;
  fileId: string;
  object: string;
  recordId: string;
  attribute: string;
  createdAt: string;
}

/** One push that changed a source (contract.md §3 `GET /schema/sources/:id/history`). */
export interface SourceHistoryEntry {
  version: number;
  appliedAt: string;
  planHash: string;
  /** The key that pushed (its name as it was then); null for a push made without one (the store's own callers). */
  key: { id: string; name: string } | null;
  steps: { create: number; change: number; drop: number };
  /** The destructive targets this push applied, each approved by allowDestructive. */
  destructive: string[];
}
