import { declares } from './declaration.js';

/**
 * `renamedFrom` (contract.md §2): a declared object, attribute or role names the name it
 * had before, and sync renames it in place keeping its data (records, values, keys). The
 * one definition of what makes a renamedFrom a rename, read by the declaration validator
 * (which refuses the rest), the planner (which follows only a rename) and the runtime
 * routes (which take no renamedFrom at all).
 */

/** A renamedFrom that cannot be a rename: the name itself, or a name the same declaration still declares. */
export function renamedFromStillDeclared(name: string, renamedFrom: string, isDeclared: (name: string) => boolean): boolean {
  return renamedFrom === name || isDeclared(renamedFrom);
}

/**
 * The old name `name` is renamed from, or undefined when the declaration renames nothing.
 * `declared` is the declaration's mapping of its siblings (objects, attributes of one object,
 * or roles): only its own keys count, so a name such as `constructor` is never taken for
 * one (the planner once asked `in`, which sees the prototype's keys).
 */
export function renameOf(name: string, decl: { renamedFrom?: unknown }, declared: object): string | undefined {
  const from = decl.renamedFrom;
  if (typeof from !== 'string') return undefined;
  return renamedFromStillDeclared(name, from, (n) => declares(declared, n)) ? undefined : from;
}

/**
 * A declaration without its renamedFrom: the hint is an instruction for one push, never part
 * of the shape — not stored, not compared, not shown in a diff, not taken by a runtime route.
 */
export function withoutRenamedFrom<T extends { renamedFrom?: unknown }>(decl: T): Omit<T, 'renamedFrom'> {
  const { renamedFrom: _r, ...rest } = decl;
  return rest;
}

/** Why a runtime route refuses a renamedFrom (its body is the runtime attribute, not a declaration). */
export const RUNTIME_RENAMED_FROM = 'renamedFrom is for declaration files (sync); rename a runtime attribute with { "name": … }';
