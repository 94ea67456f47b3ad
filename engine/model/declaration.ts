import type { AttributeSpec } from './attribute.js';
import type { Filter, SortSpec } from './filter.js';
import type { RoleDecl } from './roles.js';

/**
 * A declaration as the YAML gives it and as `PUT /schema/sources/:id` takes it
 * (contract.md §3: objects keyed by name, attributes keyed by name, views keyed by name).
 * After validation `maxFileSize` is always bytes.
 */
export type AttributeDecl = Omit<AttributeSpec, 'name'>;

/**
 * Whether a declaration's mapping (its objects, views or roles, or one object's attributes)
 * declares `name`: its own keys only. `in` would also see the prototype's, and `constructor`
 * is a valid name, so a stored `constructor` would count as declared forever (never dropped,
 * never renamed from).
 */
export function declares(mapping: object | undefined, name: string): boolean {
  return mapping !== undefined && Object.hasOwn(mapping, name);
}

export interface ObjectDecl {
  label?: string;
  description?: string;
  /** sync only: the object's previous name, renamed in place keeping its records */
  renamedFrom?: string;
  attributes: Record<string, AttributeDecl>;
}

export interface ViewDecl {
  object: string;
  label?: string;
  description?: string;
  filter?: Filter;
  sort?: SortSpec[];
  columns?: string[];
}

export interface Declaration {
  objects: Record<string, ObjectDecl>;
  views: Record<string, ViewDecl>;
  /** Custom roles (contract.md §2), pushed in the same transaction as objects and views. */
  roles?: Record<string, RoleDecl>;
}

/** schemasync.yaml (contract.md §2). */
export interface ProjectConfig {
  source: string;
  /** A folder (every *.yaml / *.yml below it) or a list of globs, relative to the config file. */
  schema: string | string[];
  baseUrl?: string;
  targets?: Record<string, TargetConfig>;
}

/** One named instance of `targets:` and its policy (contract.md \u00a77). */
export interface TargetConfig {
  baseUrl: string;
  apiKeyEnv?: string;
  allowDestructive?: boolean | string[];
  protect?: string[];
  requireSavedPlan?: boolean;
  watch?: boolean;
}
