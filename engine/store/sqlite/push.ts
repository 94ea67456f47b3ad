import { ServiceError } from '../../errors.js';
import type { Declaration } from '../../model/declaration.js';
import { sameJson } from '../../model/same-json.js';
import { planPush, refusal } from '../../plan/index.js';
import { nowAfter } from './database.js';
import { keysWithRole, listRoles } from './roles.js';
import type { SqliteStore } from './core.js';
import type { Plan } from '../../plan/types.js';
import type { PushOptions, PushResult } from '../types.js';

/**
 * PUT /schema/sources/:id (contract.md §3): plan with the pure planner, refuse by the
 * contract's order, else apply every step in one transaction (engine/store/apply.ts).
 * A push with no steps against an existing source changes nothing, version included.
 */
export function pushSource(store: SqliteStore, id: string, declaration: Declaration, options: PushOptions): PushResult {
  // A dry run takes no write lock. A push plans, checks if-match and applies inside one write
  // transaction, so another process on the same data folder cannot change the schema or the
  // source between the plan (and the version it was checked against) and its application.
  if (options.dryRun) return planAndApply(store, id, declaration, options).result!;
  let outcome: Outcome;
  try {
    outcome = store.schemaTransaction(() => planAndApply(store, id, declaration, options));
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'SCHEMA_SYNC_FAILED') throw err;
    const cause = err instanceof Error ? err.message : String(err);
    throw new ServiceError('SCHEMA_SYNC_FAILED', `Applying the plan of source "${id}" failed and was rolled back: ${cause}`, {
      data: { cause, ...(err instanceof ServiceError ? { code: err.code, errors: err.details.errors } : {}) },
    });
  }
  if (outcome.refused) throw outcome.refused;
  return outcome.result!;
}

/** A refusal is returned, not thrown: nothing was written, and it must not read as a failed apply. */
interface Outcome {
  result?: PushResult;
  refused?: ServiceError;
}

function planAndApply(store: SqliteStore, id: string, declaration: Declaration, options: PushOptions): Outcome {
  const source = store.findSource(id);
  const roles = listRoles(store.db).map((r) => ({ ...r, keys: keysWithRole(store.db, r.name) }));
  const plan = planPush({ sourceId: id, declaration, objects: store.listObjects(), views: store.listViews(), roles, source, facts: store.facts() });
  const currentVersion = source?.version ?? 0;
  if (options.dryRun) return { result: { version: currentVersion, applied: false, plan } };
  const refused = refusal(plan, {
    currentVersion,
    ...(options.allowDestructive === undefined ? {} : { allowDestructive: options.allowDestructive }),
    ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
  });
  if (refused) return { refused };
  // Next to the if-match check and under the same write lock (contract.md §3): the plan
  // compared is the one applied below, so a record written after the caller's dry run (which
  // changes `affected`) cannot slip an unreviewed loss in between the check and the apply.
  if (options.expectPlan !== undefined && options.expectPlan !== plan.planHash) return { refused: planChanged(options.expectPlan, plan) };
  if (source && plan.steps.length === 0) {
    // Nothing to apply, but the declaration itself may differ (a renamedFrom hint, a moved
    // attribute): GET /schema/sources/:id must return what was last pushed (contract §3).
    // The version stays: the schema did not move, so a saved plan's if-match still holds.
    if (!sameJson(source.declaration, declaration) && JSON.stringify(source.declaration) !== JSON.stringify(declaration)) {
      store.db.prepare('UPDATE _ss_sources SET declaration = ?, applied_at = ? WHERE id = ?').run(JSON.stringify(declaration), nowAfter(source.appliedAt), id);
      if (options.handOver) store.rememberSource(id, declaration);
    }
    return { result: { version: currentVersion, applied: true, plan } };
  }
  const version = store.applyPlanNow(plan, id, declaration);
  store.history.record(id, plan, options.by);
  // Inside the transaction: the cache entry carries this push's (version, appliedAt), so
  // findSource uses it only while the row still holds them (a rollback does not).
  if (options.handOver) store.rememberSource(id, declaration);
  return { result: { version, applied: true, plan } };
}

/** The 409 of a push whose plan is not the reviewed one: what the push would do now, step by step. */
function planChanged(expected: string, plan: Plan): ServiceError {
  const steps = plan.steps.map((s) => `${s.action} ${s.target}${s.destructive ? ` (destructive, ${s.affected ?? 0} affected)` : s.affected ? ` (${s.affected} affected)` : ''}`);
  return new ServiceError(
    'SCHEMA_CONFLICT',
    `The plan changed since it was reviewed (expected planHash ${expected.slice(0, 12)}, now ${plan.planHash.slice(0, 12)}); it would now do: ${steps.join('; ') || 'nothing'}`,
    {
      fix: 'plan again and review the new plan before syncing',
      errors: [{ path: ['expectPlan'], message: `the plan now has planHash ${plan.planHash}` }],
      data: { expectPlan: expected, planHash: plan.planHash },
    },
  );
}
