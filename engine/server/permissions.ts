import { forbidden } from '../errors.js';
import { SCOPES, type Actor, type BuiltinRole, type Scope } from '../store/types.js';

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
const rankOf = (role: string): number | undefined => (Object.hasOwn(ROLE_RANK, role) ? ROLE_RANK[role as BuiltinRole] : undefined);

export function can(actor: Actor, action: Action): boolean {
  const allowed = ROLE_ACTIONS[actor.role];
  if (!allowed?.has(action)) return false;
  return actor.scopes === null || actor.scopes.includes(action);
}

/** Every action the key may take: what GET /keys/self tells a key, and what MCP offers tools by. */
export function actionsOf(actor: Actor): Action[] {
  return SCOPES.filter((action) => can(actor, action));
}

/** Refuse with the one fixed message (Authentication rule 3: never naming what was refused). */
export function requirePermission(actor: Actor, action: Action): void {
  if (!can(actor, action)) throw forbidden();
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
 * An admin is thereby kept off owner keys, as before. A role outside the ranking is never
 * within rights (callers check the role exists first, so an unknown one stays a 404).
 */
export function withinRights(actor: Actor, target: Grant): boolean {
  if (!can(actor, 'keys:manage')) return false;
  const mine = rankOf(actor.role);
  const theirs = rankOf(target.role);
  if (mine === undefined || theirs === undefined || theirs > mine) return false;
  if (actor.scopes === null) return true;
  const own = actor.scopes;
  return target.scopes !== null && target.scopes.every((s) => own.includes(s));
}

/** Refuse with the one fixed message: never naming the role or scope that was too much. */
export function requireWithinRights(actor: Actor, target: Grant): void {
  if (!withinRights(actor, target)) throw forbidden();
}
