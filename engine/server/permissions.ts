import { forbidden } from '../errors.js';
import { SCOPES, type Actor, type Scope } from '../store/types.js';

/**
 * Who may do what (contract.md §3 "Roles, keys, views"). An action is named like the
 * scope that grants it, so one table answers both questions: a key may act when its role
 * allows the action AND (when it carries scopes) one of its scopes does.
 */
export type Action = Scope;

const ALL: ReadonlySet<Action> = new Set(SCOPES);

/** The built-in roles × actions. `admin` also holds keys:manage, but not over owner keys (see keys route). */
export const ROLE_ACTIONS: Readonly<Record<string, ReadonlySet<Action>>> = {
  owner: ALL,
  admin: ALL,
  member: new Set<Action>(['records:read', 'records:write', 'schema:read', 'files:read', 'files:write', 'search', 'mcp']),
  viewer: new Set<Action>(['records:read', 'schema:read', 'files:read', 'search', 'mcp']),
};

export function can(actor: Actor, action: Action): boolean {
  const allowed = ROLE_ACTIONS[actor.role];
  if (!allowed?.has(action)) return false;
  return actor.scopes === null || actor.scopes.includes(action);
}

/** Refuse with the one fixed message (Authentication rule 3: never naming what was refused). */
export function requirePermission(actor: Actor, action: Action): void {
  if (!can(actor, action)) throw forbidden();
}

/** Only an owner key may create or revoke owner keys (brief: admin manages all keys but owner ones). */
export function requireMayManageRole(actor: Actor, targetRole: string): void {
  requirePermission(actor, 'keys:manage');
  if (targetRole === 'owner' && actor.role !== 'owner') throw forbidden();
}
