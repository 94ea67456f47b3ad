import { closest } from '../declaration/suggest.js';
import type { Declaration } from '../model/declaration.js';
import type { AllowDestructive, Plan, Step } from './types.js';

/**
 * Which destructive steps `allowDestructive` covers (contract.md §3): `true` covers every
 * loss; a list covers exactly the steps whose target it names, so a reviewer approves
 * only the losses they saw. An object target (`legacy`) covers the drop of that object
 * only, not losses inside other objects.
 */
export function isCovered(step: Step, allow: AllowDestructive | undefined): boolean {
  if (!step.destructive) return true;
  if (allow === true) return true;
  if (allow === undefined || allow === false) return false;
  return allow.includes(step.target);
}

export function uncoveredDestructive(plan: Plan, allow: AllowDestructive | undefined): Step[] {
  return plan.steps.filter((s) => !isCovered(s, allow));
}

export function destructiveSteps(plan: Plan): Step[] {
  return plan.steps.filter((s) => s.destructive);
}

/** An `allowDestructive` target that names nothing, and the near miss when there is one. */
export interface UnknownTarget {
  target: string;
  suggestion?: string;
}

/**
 * The targets of an `allowDestructive` list that name nothing the push could touch: not an
 * object or `object.attribute` the declaration declares, nor a step of the plan (a drop
 * names what the declaration no longer declares). A typo (`deal.amout`) would approve
 * nothing while its author believes the loss approved, and would silently approve it once
 * such a name exists (issue 13), so `sync` refuses it and the watch loop says so.
 */
export function unknownAllowTargets(allow: AllowDestructive | undefined, declaration: Declaration, plan: Plan): UnknownTarget[] {
  if (!Array.isArray(allow)) return [];
  const known = new Set<string>(plan.steps.map((s) => s.target));
  for (const [name, object] of Object.entries(declaration.objects ?? {})) {
    known.add(name);
    for (const attribute of Object.keys(object.attributes ?? {})) known.add(`${name}.${attribute}`);
  }
  return allow
    .filter((t) => !known.has(t))
    .map((target) => {
      const suggestion = closest(target, known);
      return suggestion === undefined ? { target } : { target, suggestion };
    });
}

/** `"deal.amout": did you mean "deal.amount"?` for each near miss, or undefined when none has one. */
export function didYouMean(unknown: readonly UnknownTarget[]): string | undefined {
  const near = unknown.filter((u) => u.suggestion !== undefined);
  return near.length > 0 ? near.map((u) => `"${u.target}": did you mean "${u.suggestion}"?`).join(' ') : undefined;
}
