import { closest } from '../../declaration/suggest.js';
import { ServiceError, type FieldError } from '../../errors.js';
import { isValidName, malformedName, quoteName } from '../../model/names.js';
import { isBuiltinRole, renameRoleObject, type RoleDecl } from '../../model/roles.js';
import type { Owner, StoredRole } from '../../model/stored.js';
import type { Executor } from '../port.js';
import { ownerOf } from './catalog-rows.js';
import { bumpKeysVersion } from './keys.js';
import { now } from './time.js';
import { withoutRenamedFrom } from '../../model/renames.js';

/**
 * Custom roles (contract.md §3 "Roles, keys, views", §2 `roles:`): rows of `_ss_roles`,
 * runtime (POST/PUT/DELETE /roles) or owned by the source that declared them. Runs inside
 * the caller's transaction. Keys name their role by name, so a role rename moves them.
 */
interface RoleRow {
  name: string;
  decl: string;
  owner_kind: string;
  owner_id: string | null;
}

const toRole = (r: RoleRow): StoredRole => {
  const decl = JSON.parse(r.decl) as RoleDecl;
  return { name: r.name, ...decl, owner: ownerOf(r.owner_kind, r.owner_id) };
};

/** What is stored of a declaration: `renamedFrom` is a sync hint, never stored. */
const storedDecl = (decl: RoleDecl): string => JSON.stringify(withoutRenamedFrom(decl));

export async function listRoles(ex: Executor): Promise<StoredRole[]> {
  return (await ex.all<RoleRow>('SELECT name, decl, owner_kind, owner_id FROM _ss_roles ORDER BY name')).map(toRole);
}

export async function findRole(ex: Executor, name: string): Promise<StoredRole | undefined> {
  const row = await ex.get<RoleRow>('SELECT name, decl, owner_kind, owner_id FROM _ss_roles WHERE name = ?', [name]);
  return row ? toRole(row) : undefined;
}

/** Active keys holding the role, for the refusal that names them (a revoked key needs nothing). */
export async function keysWithRole(ex: Executor, role: string): Promise<{ id: string; name: string }[]> {
  return ex.all<{ id: string; name: string }>('SELECT id, name FROM _ss_keys WHERE role = ? AND revoked_at IS NULL ORDER BY created_at, id', [role]);
}

export async function upsertRole(tx: Executor, name: string, decl: RoleDecl, owner: Owner): Promise<void> {
  const t = now();
  await tx.run(
    'INSERT INTO _ss_roles (name, decl, owner_kind, owner_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ' +
      'ON CONFLICT(name) DO UPDATE SET decl = excluded.decl, owner_kind = excluded.owner_kind, owner_id = excluded.owner_id, updated_at = excluded.updated_at',
    [name, storedDecl(decl), owner.kind, owner.id ?? null, t, t],
  );
}

export async function dropRole(tx: Executor, name: string): Promise<void> {
  await tx.run('DELETE FROM _ss_roles WHERE name = ?', [name]);
}

/** A role renamed in place (`renamedFrom`): its keys keep working under the new name. */
export async function renameRole(tx: Executor, from: string, to: string): Promise<void> {
  await tx.run('UPDATE _ss_roles SET name = ?, updated_at = ? WHERE name = ?', [to, now(), from]);
  await tx.run('UPDATE _ss_keys SET role = ? WHERE role = ?', [to, from]);
  // Remembered authentications carry the old role name, in every process.
  await bumpKeysVersion(tx);
}

/** An object renamed: every stored role's permissions follow it (contract.md §2). */
export async function renameObjectInRoles(tx: Executor, from: string, to: string): Promise<void> {
  for (const role of await listRoles(tx)) {
    const { name, owner: _o, ...decl } = role;
    const next = renameRoleObject(decl, from, to);
    if (next) await tx.run('UPDATE _ss_roles SET decl = ?, updated_at = ? WHERE name = ?', [JSON.stringify(next), now(), name]);
  }
}

// ---------------------------------------------------------------- the runtime routes' rules

/** Built-in roles are system entities (spec: SCHEMA_SYSTEM_ENTITY_IMMUTABLE, 403). */
export function refuseBuiltin(name: string): void {
  if (isBuiltinRole(name)) {
    throw new ServiceError('SCHEMA_SYSTEM_ENTITY_IMMUTABLE', `The role "${name}" is built in and cannot be created, changed or deleted`);
  }
}

export function roleNotFound(name: string): ServiceError {
  return new ServiceError('SCHEMA_ROLE_NOT_FOUND', `No role named ${quoteName(name)}`);
}

/** A role name follows the object-name rule (contract.md §2); the spec has no role-name code. */
export function checkRoleName(name: string): void {
  if (!isValidName(name)) {
    const message = malformedName('Role', name);
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', message, { errors: [{ path: ['name'], message }] });
  }
}

/** Every object a permission names must be stored ("*" aside), with the near miss. */
export function checkPermissionObjects(decl: RoleDecl, stored: readonly string[]): void {
  const known = new Set(stored);
  const errors: FieldError[] = [];
  decl.permissions.forEach((p, i) => {
    if (p.object === '*' || known.has(p.object)) return;
    const near = closest(p.object, known);
    errors.push({ path: ['permissions', i, 'object'], message: `no object named ${quoteName(p.object)}${near ? ` (did you mean "${near}"?)` : ''}` });
  });
  if (errors.length > 0) throw new ServiceError('SCHEMA_VALIDATION_FAILED', errors.map((e) => e.message).join('; '), { errors });
}

/** A role a source declared is the source's: runtime routes may not change it (as views). */
export function refuseSourceOwned(role: StoredRole): void {
  if (role.owner.kind !== 'runtime') {
    const who = role.owner.kind === 'source' ? `source "${role.owner.id ?? ''}"` : role.owner.kind;
    throw new ServiceError('SCHEMA_DUPLICATE', `The role "${role.name}" is owned by ${who}; change it in that source's declaration`);
  }
}

/** Deleting a role that active keys hold would strand them: refused, naming the keys. */
export async function refuseIfKeysHold(ex: Executor, name: string): Promise<void> {
  const keys = await keysWithRole(ex, name);
  if (keys.length === 0) return;
  const list = keys.slice(0, 5).map((k) => `${k.id} "${k.name}"`).join(', ') + (keys.length > 5 ? `, and ${keys.length - 5} more` : '');
  throw new ServiceError('SCHEMA_CONFLICT', `The role "${name}" is held by ${keys.length} active key${keys.length === 1 ? '' : 's'}: ${list}`, {
    fix: `revoke those keys (schemasync keys revoke <id>) or give their holders keys of another role first`,
  });
}

