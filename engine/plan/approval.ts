import { destructiveSteps } from './policy.js';
import type { Plan } from './types.js';

/**
 * How a user allows a plan's losses (contract.md §3 `allowDestructive`, §4
 * `--allow-destructive`): the one definition the engine's refusal `fix`, the CLI's `plan` and
 * `sync` output, the watch loop's held-back command and MCP's plan_sync all print.
 *
 * It does not travel over HTTP: SCHEMA_DESTRUCTIVE_NOT_ALLOWED is a masked 500 ("clients learn
 * the details from a dry run", contract.md §3) and the envelope has no field for it, so every
 * client derives it here from the dry run's plan.
 */

/**
 * The targets an approval must name: every destructive step's, not only those the current
 * approval leaves out, because an allow list replaces the previous one (`sync
 * --allow-destructive x` replaces the target's own list), so naming only the uncovered ones
 * would refuse the rest.
 */
export function approvalTargets(plan: Plan): string[] {
  return [...new Set(destructiveSteps(plan).map((s) => s.target))];
}

/** The flag that approves exactly `targets`. */
export function allowDestructiveFlag(targets: readonly string[]): string {
  return `--allow-destructive ${targets.join(',')}`;
}

/** The sentence: every loss, or exactly these. */
export function allowLossHint(targets: readonly string[]): string {
  return `Destructive steps need --allow-destructive (all) or ${allowDestructiveFlag(targets)}`;
}
