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
