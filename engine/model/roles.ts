/**
 * Roles (contract.md §2 "roles:", §3 "Roles, keys, views" and its role table). The one
 * definition of what a custom role is and what it allows; the server's permission check
 * (engine/server/permissions.ts), the declaration rules, the planner and the store read it.
 */
export const BUILTIN_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type BuiltinRole = (typeof BUILTIN_ROLES)[number];

export const isBuiltinRole = (name: string): name is BuiltinRole => (BUILTIN_ROLES as readonly string[]).includes(name);

export const RECORD_ACTIONS = ['read', 'create', 'update', 'delete'] as const;
export type RecordAction = (typeof RECORD_ACTIONS)[number];

export const SCHEMA_ACCESS = ['none', 'read', 'write'] as const;
export type SchemaAccess = (typeof SCHEMA_ACCESS)[number];

/** `object` is an object name or "*" (every object). */
export interface RolePermission {
  object: string;
  actions: RecordAction[];
}

/** A role as declared in YAML and as POST/PUT /roles take it (without the name). */
export interface RoleDecl {
  label?: string;
  description?: string;
  /** default none */
  schema?: SchemaAccess;
  permissions: RolePermission[];
  /** sync only: the role's previous name; its keys follow the rename */
  renamedFrom?: string;
}

/** What a custom role grants, as the permission check reads it. */
export interface RoleGrants {
  schema: SchemaAccess;
  permissions: readonly RolePermission[];
}

export const grantsOf = (decl: RoleDecl): RoleGrants => ({ schema: decl.schema ?? 'none', permissions: decl.permissions });

/** Whether the role grants `action` on `object` (a permission for "*" covers every object). */
export function roleAllowsRecord(grants: RoleGrants, action: RecordAction, object: string | undefined): boolean {
  return grants.permissions.some((p) => p.actions.includes(action) && (object === undefined || p.object === '*' || p.object === object));
}

/** Objects a role's permissions name (not "*"), for the checks that they exist. */
export function permissionObjects(decl: Pick<RoleDecl, 'permissions'>): string[] {
  return [...new Set(decl.permissions.map((p) => p.object).filter((o) => o !== '*'))];
}

/** The role with object `from` renamed to `to` in its permissions, or undefined when it does not name it. */
export function renameRoleObject<T extends Pick<RoleDecl, 'permissions'>>(decl: T, from: string, to: string): T | undefined {
  if (!decl.permissions.some((p) => p.object === from)) return undefined;
  return { ...decl, permissions: decl.permissions.map((p) => (p.object === from ? { ...p, object: to } : p)) };
}
