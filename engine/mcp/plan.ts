import { allowLossHint, approvalTargets } from '../plan/approval.js';
import type { PushAnswer } from '../sdk/index.js';

/**
 * plan_sync's answer (issue 18: "steps, conflicts, samples, fixes and planHash"): the dry
 * run's plan as the server gave it, with `planHash` passed through when the server sends
 * one, and a closing line saying who applies it — never this tool (contract.md §6).
 */
export function planPayload(source: string, answer: PushAnswer): Record<string, unknown> {
  const plan = answer.plan as PushAnswer['plan'] & { planHash?: string };
  const planHash = plan.planHash ?? (answer as PushAnswer & { planHash?: string }).planHash;
  return {
    source,
    applied: false,
    baseVersion: plan.baseVersion,
    ...(planHash !== undefined ? { planHash } : {}),
    summary: plan.summary,
    steps: plan.steps,
    conflicts: plan.conflicts,
    destructive: plan.steps.filter((s) => s.destructive).map((s) => s.target),
    next:
      plan.conflicts.length > 0
        ? 'The push would be refused: each conflict names its fix. Nothing was applied.'
        : `Nothing was applied. A person applies a reviewed plan: \`schemasync plan --out plan.json\`, then \`schemasync sync --plan plan.json\` (or the CI workflow).${lossNote(approvalTargets(plan))}`,
  };
}

/** The same sentence the CLI and watch print (engine/plan/approval.ts), when the plan loses data. */
function lossNote(targets: readonly string[]): string {
  return targets.length > 0 ? ` ${allowLossHint(targets)}.` : '';
}
