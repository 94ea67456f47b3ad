import { createHash } from 'node:crypto';
import type { Step } from './types.js';

/**
 * `planHash` (contract.md §3): a stable hash of what a push would do — each step's action
 * and target, its field changes, whether it is destructive and the counts of data it loses
 * or touches (affected, backfilled). Reasons and sample ids are left out: they are prose and
 * examples, so two dry runs that would do the same thing hash the same even when a different
 * record is the first example. The ONE definition: the planner stamps every plan with it, the
 * store compares `expectPlan` against it, and a saved plan records it.
 */
export const PLAN_HASH_PATTERN = '^[0-9a-f]{64}$';

export function planHash(steps: readonly Step[]): string {
  const seen = steps.map((s) => [
    s.action,
    s.target,
    s.destructive,
    s.affected ?? 0,
    s.action === 'change_attribute' ? (s.backfill ?? 0) : 0,
    'changes' in s ? s.changes.map((c) => [c.field, c.from ?? null, c.to ?? null]) : [],
    // what a created attribute or object will be: a runtime edit of it changes the push
    s.action === 'add_attribute' ? s.spec : s.action === 'create_object' || s.action === 'create_view' || s.action === 'create_role' ? s.decl : null,
  ]);
  return createHash('sha256').update(canonical(seen)).digest('hex');
}

/** JSON with object keys sorted, so the hash does not depend on key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}
