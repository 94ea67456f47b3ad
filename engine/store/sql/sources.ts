import { ServiceError } from '../../errors.js';
import type { Declaration } from '../../model/declaration.js';
import { sameJson } from '../../model/same-json.js';
import { pushPlanner, refusal } from '../../plan/index.js';
import type { StoredRole } from '../../model/stored.js';
import type { Plan } from '../../plan/types.js';
import type { Executor } from '../port.js';
import type { PushOptions, PushResult } from '../types.js';
import { applyPlan } from './apply.js';
import { loadViews } from './catalog-rows.js';
import type { Core } from './context.js';
import { recordHistory } from './history.js';
import { probeFor } from './probe.js';
import { keysWithRole, listRoles } from './roles.js';
import { nowAfter } from './time.js';

/** How the store runs a push's parts: a read (dry run) or one write transaction. */
export interface PushRunner {
  read<T>(fn: (core: Core, ex: Executor) => Promise<T>): Promise<T>;
  write<T>(fn: (core: Core, tx: Executor) => Promise<T>): Promise<T>;
}

/**
 * PUT /schema/sources/:id (contract.md §3): plan with the pure planner, refuse by the
 * contract's order, else apply every step in one transaction (engine/store/apply.ts).
 * A push with no steps against an existing source changes nothing, version included.
 */
export async function pushSource(run: PushRunner, id: string, declaration: Declaration, options: PushOptions): Promise<PushResult> {
  // A dry run takes no write lock. A push plans, checks if-match and applies inside one write
  // transaction, so another process on the same data folder cannot change the schema or the
  // source between the plan (and the version it was checked against) and its application.
  // Invariant (source versions): the version read for if-match and the version written are
  // in that one transaction; on a backend with concurrent writers SERIALIZABLE makes two
  // pushes of one source conflict (the second is retried and plans against the first's
  // result), as the (source_id, version) key of the history makes a double write fail.
  if (options.dryRun) return (await run.read((core, ex) => planAndApply(core, ex, id, declaration, options))).result!;
  let outcome: Outcome;
  try {
    outcome = await run.write((core, tx) => planAndApply(core, tx, id, declaration, options));
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

async function planAndApply(core: Core, ex: Executor, id: string, declaration: Declaration, options: PushOptions): Promise<Outcome> {
  const source = await core.sources.find(ex, id);
  const roles: (StoredRole & { keys: { id: string; name: string }[] })[] = [];
  for (const r of await listRoles(ex)) roles.push({ ...r, keys: await keysWithRole(ex, r.name) });
  const objects = await core.catalog.list(ex);
  const views = await loadViews(ex);
  // The planner is pure and synchronous; the data it asks about is read in between (probe.ts).
  const plan = await probeFor(core, ex, pushPlanner({ sourceId: id, declaration, objects, views, roles, source }));
  const currentVersion = source?.version ?? 0;
  if (options.dryRun) return { result: { version: currentVersion, applied: false, plan } };
  const refused = refusal(plan, {
    currentVersion,
    ...(options.allowDestructive === undefined ? {} : { allowDestructive: options.allowDestructive }),
    ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
  });
  if (refused) return { refused };
  try {
    options.authorize?.(plan);
  } catch (err) {
    if (err instanceof ServiceError) return { refused: err };
    throw err;
  }
  // Next to the if-match check and under the same write lock (contract.md §3): the plan
  // compared is the one applied below, so a record written after the caller's dry run (which
  // changes `affected`) cannot slip an unreviewed loss in between the check and the apply.
  if (options.expectPlan !== undefined && options.expectPlan !== plan.planHash) return { refused: planChanged(options.expectPlan, plan) };
  if (source && plan.steps.length === 0) {
    // Nothing to apply, but the declaration itself may differ (a renamedFrom hint, a moved
    // attribute): GET /schema/sources/:id must return what was last pushed (contract §3).
    // The version stays: the schema did not move, so a saved plan's if-match still holds.
    if (!sameJson(source.declaration, declaration) && JSON.stringify(source.declaration) !== JSON.stringify(declaration)) {
      await ex.run('UPDATE _ss_sources SET declaration = ?, applied_at = ? WHERE id = ?', [JSON.stringify(declaration), nowAfter(source.appliedAt), id]);
      if (options.handOver) await core.sources.remember(ex, id, declaration);
    }
    return { result: { version: currentVersion, applied: true, plan } };
  }
  const version = await applyPlan(core, ex, plan, id, declaration);
  await recordHistory(ex, id, plan, options.by);
  // Inside the transaction: the cache entry carries this push's (version, appliedAt), so
  // findSource uses it only while the row still holds them (a rollback does not).
  if (options.handOver) await core.sources.remember(ex, id, declaration);
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
