import type { Conflict, Plan, Step } from './types.js';

/**
 * A target's `protect` list (contract.md §7): the objects and attributes named there are
 * never dropped, nor changed destructively, on that target — whatever `--allow-destructive`
 * or the target's own `allowDestructive` says. An object entry (`company`) covers the
 * object and every attribute of it; an attribute entry (`deal.amount`) that one attribute.
 * Renames keep the data, so they are not refused.
 *
 * Applied by the CLI to the instance's dry run (the instance does not know the targets of
 * a project file): each refused step becomes a conflict, so `plan` shows it as `!` and exits
 * 1, and `sync` refuses before it sends anything. Pure, like the planner.
 */
export function protectedBy(step: Step, protect: readonly string[]): string | undefined {
  const dropping = step.action === 'drop_object' || step.action === 'drop_attribute';
  if (!dropping && !step.destructive) return undefined;
  const object = step.target.split('.', 1)[0]!;
  return protect.find((p) => p === step.target || p === object || (step.action === 'drop_object' && p.startsWith(`${step.target}.`)));
}

export function protectConflicts(plan: Plan, protect: readonly string[], targetName: string): Conflict[] {
  const out: Conflict[] = [];
  for (const step of plan.steps) {
    const entry = protectedBy(step, protect);
    if (entry === undefined) continue;
    const what = step.action === 'drop_object' || step.action === 'drop_attribute' ? 'dropped' : 'changed destructively';
    out.push({
      code: 'SCHEMA_SYNC_CONFLICT',
      target: step.target,
      rule: 'target_protected',
      message: `${step.target} is protected on target "${targetName}" (protect: ${entry}) and would be ${what}${step.affected ? ` (${step.affected} affected)` : ''}; --allow-destructive does not override protect.`,
      fix: `keep ${step.target} as it is in the declaration, or remove "${entry}" from targets.${targetName}.protect in schemasync.yaml in a reviewed change`,
    });
  }
  return out;
}

/** The plan as the target's policy sees it: the protect conflicts added, the summary counting them. */
export function withProtect(plan: Plan, protect: readonly string[] | undefined, targetName: string | undefined): Plan {
  if (!protect || protect.length === 0 || targetName === undefined) return plan;
  const extra = protectConflicts(plan, protect, targetName);
  if (extra.length === 0) return plan;
  const conflicts = [...plan.conflicts, ...extra];
  return { ...plan, conflicts, summary: { ...plan.summary, conflicts: conflicts.length } };
}
