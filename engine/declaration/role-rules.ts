import { isValidName, malformedName } from '../model/names.js';
import { renamedFromStillDeclared } from '../model/renames.js';
import { isBuiltinRole } from '../model/roles.js';
import { isPlainObject, type Path } from './diagnostic.js';
import { add, subject, unreadableNote, type RuleContext } from './rule-context.js';
import { closest, suggestName } from './suggest.js';

/**
 * The rules of `roles:` a JSON Schema cannot say (contract.md §2): role names follow the
 * object-name rule; owner, admin, member and viewer are built in and cannot be declared
 * (SCHEMA_SYSTEM_ENTITY_IMMUTABLE); a permission names a declared or stored object (or
 * "*"). Offline, `validate` cannot see the instance, so an object it does not find in the
 * files is a warning there and an error in the push, which knows what is stored.
 */
export function checkRoles(roles: Record<string, unknown>, ctx: RuleContext, objects: Record<string, unknown>): void {
  const declared = new Set(Object.keys(objects));
  for (const [name, role] of Object.entries(roles)) {
    const path: Path = ['roles', name];
    if (isBuiltinRole(name)) {
      add(ctx, {
        severity: 'error',
        code: 'SCHEMA_SYSTEM_ENTITY_IMMUTABLE',
        message: `The role "${name}" is built in and cannot be declared (owner, admin, member and viewer are system roles)`,
        path,
        on: 'key',
        fix: 'Give the role another name.',
      });
    } else if (!isValidName(name)) {
      const suggestion = suggestName(name);
      add(ctx, {
        severity: 'error',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: malformedName('Role', name),
        path,
        on: 'key',
        ...(suggestion ? { suggestion } : {}),
      });
    }
    if (!isPlainObject(role)) continue;
    const renamedFrom = role['renamedFrom'];
    if (typeof renamedFrom === 'string' && (renamedFromStillDeclared(name, renamedFrom, (n) => Object.hasOwn(roles, n)) || isBuiltinRole(renamedFrom) || !isValidName(renamedFrom))) {
      add(ctx, {
        severity: 'error',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: `${subject(ctx, path)} is renamed from "${renamedFrom}", which ${isValidName(renamedFrom) && !isBuiltinRole(renamedFrom) ? 'is still declared' : 'cannot be a custom role'}`,
        path: [...path, 'renamedFrom'],
      });
    }
    const permissions = Array.isArray(role['permissions']) ? role['permissions'] : [];
    permissions.forEach((p: unknown, i) => {
      if (!isPlainObject(p) || typeof p['object'] !== 'string') return;
      const object = p['object'];
      if (object === '*' || declared.has(object) || ctx.storedObjects?.has(object)) return;
      const candidates = [...declared, ...(ctx.storedObjects ?? [])];
      const suggestion = closest(object, candidates);
      // Offline the instance may hold it: a warning; the push knows (storedObjects) and refuses.
      const offline = ctx.storedObjects === undefined;
      const where = offline ? `is not declared in these files${unreadableNote(ctx)} (the push checks the instance)` : 'is neither declared nor stored';
      add(ctx, {
        ...(offline ? { severity: 'warning' as const } : { severity: 'error' as const, code: 'SCHEMA_VALIDATION_FAILED' as const }),
        message: `${subject(ctx, path)} grants on object "${object}", which ${where}`,
        path: [...path, 'permissions', i, 'object'],
        ...(suggestion ? { suggestion } : {}),
      });
    });
  }
}
