import { forbidden } from '../errors.js';
import { isBuiltinRole, RECORD_ACTIONS, roleAllowsRecord, type BuiltinRole, type RecordAction, type RoleGrants } from '../model/roles.js';
import { SCOPES, type Actor, type Scope } from '../store/types.js';

/**
 * Who may do what (contract.md §3 "Roles, keys, views"). An action is named like the
 * scope that grants it, so one table answers both questions: a key may act when its role
 * allows the action AND (when it carries scopes) one of its scopes does.
 */
export type Action = Scope;

const ALL: ReadonlySet<Action> = new Set(SCOPES);

/** The built-in roles × actions. `admin` also holds keys:manage, but not over owner keys (ROLE_RANK). */
export const ROLE_ACTIONS: Readonly<Record<string, ReadonlySet<Action>>> = {
  owner: ALL,
  admin: ALL,
  member: new Set<Action>(['records:read', 'records:write', 'schema:read', 'files:read', 'files:write', 'search', 'mcp']),
  viewer: new Set<Action>(['records:read', 'schema:read', 'files:read', 'search', 'mcp']),
};

/**
 * owner > admin > member > viewer. Each role's actions hold the next one's, and owner is
 * above admin only in managing owner keys — which is exactly what the rank decides.
 */
const ROLE_RANK: Readonly<Record<BuiltinRole, number>> = { owner: 3, admin: 2, member: 1, viewer: 0 };
/**
 * A custom role ranks with admin for key management: owners and admins may mint its keys
 * (contract.md §3 role table: keys "manage (roles up to admin)"), and a custom role itself
 * never manages keys, so it can mint nothing.
 */
const CUSTOM_RANK = 2;
const rankOf = (role: string): number => (isBuiltinRole(role) ? ROLE_RANK[role] : CUSTOM_RANK);

/** What an action is about: the object of a record route and which record action it is. */
export interface ActionTarget {
  object?: string | undefined;
  record?: RecordAction | undefined;
}

const NO_GRANTS: RoleGrants = { schema: 'none', permissions: [] };
const WRITES: readonly RecordAction[] = ['create', 'update', 'delete'];

/**
 * The custom row of the role table (contract.md §3): records per object as declared; files
 * read, and write with record create or update on some object; search yes (hits are cut
 * to readable objects); schema as declared; keys never. Without an object, an action on
 * records is allowed when the role grants it on some object (a route that then narrows by
 * object checks again with the object).
 */
function customAllows(g: RoleGrants, action: Action, target: ActionTarget): boolean {
  switch (action) {
    case 'records:read':
      return roleAllowsRecord(g, 'read', target.object);
    case 'records:write':
      return (target.record ? [target.record] : WRITES).some((a) => roleAllowsRecord(g, a, target.object));
    case 'schema:read':
      return g.schema !== 'none';
    case 'schema:write':
      return g.schema === 'write';
    case 'files:read':
    case 'search':
    case 'mcp':
      return true;
    case 'files:write':
      return roleAllowsRecord(g, 'create', undefined) || roleAllowsRecord(g, 'update', undefined);
    case 'keys:manage':
      return false;
  }
}

/** The one permission check of every route: the key's role (built-in or custom) AND its scopes. */
export function can(actor: Actor, action: Action, target: ActionTarget = {}): boolean {
  if (actor.scopes !== null && !actor.scopes.includes(action)) return false;
  return roleAllows(actor, action, target);
}

/**
 * What the key's role allows, its scopes aside: for a right a request exercises through
 * another one (a push's role steps go with schema write, which the scopes gate; who may change
 * roles at all is the role's to say).
 */
export function roleAllows(actor: Actor, action: Action, target: ActionTarget = {}): boolean {
  if (isBuiltinRole(actor.role)) return ROLE_ACTIONS[actor.role]!.has(action);
  return customAllows(actor.grants ?? NO_GRANTS, action, target);
}

/**
 * What a push to a source needs (contract.md §3 role table): a dry run writes nothing, so
 * schema read is enough (a member or viewer key, a `schema:read` key can plan in CI); a
 * real push changes the schema, so it needs schema write.
 */
export function pushAction(dryRun: boolean): Action {
  return dryRun ? 'schema:read' : 'schema:write';
}

/** Every action the key may take: what GET /keys/self tells a key, and what MCP offers tools by. */
export function actionsOf(actor: Actor): Action[] {
  return SCOPES.filter((action) => can(actor, action));
}

/** Refuse with the one fixed message (Authentication rule 3: never naming what was refused). */
export function requirePermission(actor: Actor, action: Action, target: ActionTarget = {}): void {
  if (!can(actor, action, target)) throw forbidden();
}

/** A built-in role in the shape of a custom one, for GET /roles (derived from ROLE_ACTIONS). */
export function describeBuiltinRole(role: BuiltinRole): { schema: RoleGrants['schema']; permissions: RoleGrants['permissions']; keys: 'manage' | 'none' } {
  const has = (a: Action) => ROLE_ACTIONS[role]!.has(a);
  const actions = RECORD_ACTIONS.filter((a) => (a === 'read' ? has('records:read') : has('records:write')));
  return {
    schema: has('schema:write') ? 'write' : has('schema:read') ? 'read' : 'none',
    permissions: actions.length ? [{ object: '*', actions: [...actions] }] : [],
    keys: has('keys:manage') ? 'manage' : 'none',
  };
}

/** A key as far as its rights go. */
export interface Grant {
  role: string;
  scopes: readonly Scope[] | null;
}

/**
 * The scopes a new key gets. One that asks for no limit of its own (scopes absent or null)
 * from a scoped creator inherits the creator's scopes: "no limit" would be more than the
 * creator holds, and the creator could then act through it beyond its own scopes.
 */
export function scopesToGrant(actor: Actor, asked: readonly Scope[] | null | undefined): Scope[] | null {
  if (asked === undefined || asked === null) return actor.scopes === null ? null : [...actor.scopes];
  return [...asked];
}

/**
 * The one rule for what a key may create AND revoke: a key whose rights are within the
 * actor's own — a role not above the actor's, and, when the actor is scoped, scopes that
 * are a subset of the actor's (an unscoped key is broader than any scoped one). Otherwise a
 * key limited to keys:manage could mint an unlimited key (contract.md §3: "A key may do
 * what both its role and its scopes allow"). Revocation follows the same rule so a
 * restricted key cannot take away a broader one (e.g. a keys:manage-only owner revoking the
 * unrestricted owner); a key may always revoke itself or anything it could have created.
 * An admin is thereby kept off owner keys, as before. Callers check the role exists first,
 * so an unknown one stays a 404.
 */
export function withinRights(actor: Actor, target: Grant): boolean {
  if (!can(actor, 'keys:manage')) return false;
  if (rankOf(target.role) > rankOf(actor.role)) return false;
  if (actor.scopes === null) return true;
  const own = actor.scopes;
  return target.scopes !== null && target.scopes.every((s) => own.includes(s));
}

/** Refuse with the one fixed message: never naming the role or scope that was too much. */
export function requireWithinRights(actor: Actor, target: Grant): void {
  if (!withinRights(actor, target)) throw forbidden();
}
