/** The sync engine's planner (issue 4): pure diff, refusal order, destructive policy. */
export { planPush, pushPlanner, type PlanInput } from './planner.js';
export { refusal, type RefusalOptions } from './refusal.js';
export { isCovered, uncoveredDestructive, destructiveSteps } from './policy.js';
export { specOf, storedSpec } from './attributes.js';
export { viewDecl } from './views.js';
export { roleDecl, type PlannedRole } from './roles.js';
export { sameValue, attributeChanges } from './compare.js';
export type * from './types.js';
export type { DataFacts, Violation, ViolationRule } from './facts.js';
export { SAMPLE_IDS } from './facts.js';
export { planHash, PLAN_HASH_PATTERN } from './hash.js';
export { protectConflicts, protectedBy, withProtect } from './protect.js';
export { compareDrift, type DriftItem, type DriftKind, type DriftReport } from './drift.js';
