import { createInterface } from 'node:readline/promises';
import { resolve } from 'node:path';
import { allowLossHint, approvalTargets } from '../../engine/plan/approval.js';
import { uncoveredDestructive } from '../../engine/plan/policy.js';
import { refusal } from '../../engine/plan/refusal.js';
import { ServiceRequestError, type SchemaClient } from '../../engine/sdk/index.js';
import type { Plan, Step } from '../../engine/plan/types.js';
import type { CommandRun } from '../context.js';
import { CliError, formatServiceErrorLine } from '../errors.js';
import { withProtect } from '../../engine/plan/protect.js';
import { connect, sameUrl } from '../instance.js';
import { changeList, renderPlanJson, renderPlanText } from '../render/plan.js';
import { checkAllowTargets, loadOrFail, parseAllow, readSavedPlan } from './plan-support.js';

interface SyncOptions {
  allowDestructive?: boolean | string;
  yes?: boolean;
  plan?: string;
  format?: 'text' | 'json' | 'github';
}

/**
 * `schemasync sync` (contract.md §4): plan (dry run), refuse locally by the same rules
 * and order the service applies (engine/plan/refusal.ts), confirm in a terminal, then
 * push with `if-match` set to the version the plan was made against, so a push that
 * raced another one is refused instead of applying an unreviewed plan.
 */
export const run: CommandRun<SyncOptions> = async (ctx) => {
  // no instance is exit 2 (contract §4) whatever the files say, so resolve it first (no I/O)
  const { client, instance } = connect(ctx);
  const target = instance.target;
  if (target?.config.requireSavedPlan === true && !ctx.options.plan) {
    throw new CliError(`Target "${target.name}" requires a reviewed plan (requireSavedPlan: true); nothing was sent.`, {
      hint: `Run \`schemasync plan --target ${target.name} --out plan.json\`, review it, then \`schemasync sync --target ${target.name} --plan plan.json\`.`,
    });
  }
  // the flag approves what it names; without it, what the target approves (contract.md §7)
  const allow = parseAllow(ctx.options.allowDestructive) ?? target?.config.allowDestructive;
  const project = loadOrFail(ctx);
  const json = ctx.global.json === true || ctx.options.format === 'json';

  let declaration = project.declaration;
  let source = project.source;
  let savedVersion: number | undefined;
  let savedPlan: Plan | undefined;
  let savedHash: string | undefined;
  if (ctx.options.plan) {
    const saved = readSavedPlan(resolve(ctx.cwd, ctx.options.plan));
    // A plan reviewed against staging must not be applied to production because the two
    // happen to be at the same source version.
    if (!sameUrl(saved.baseUrl, client.baseUrl)) {
      throw new CliError(`The saved plan was made against ${saved.baseUrl}, not ${client.baseUrl}; nothing was sent.`, {
        hint: 'Run `schemasync plan --out <file>` against this instance and review that plan.',
      });
    }
    savedPlan = saved.plan;
    savedHash = saved.planHash ?? saved.plan.planHash;
    declaration = saved.declaration;
    source = saved.source;
    savedVersion = saved.baseVersion;
  }

  const dry = await client.sources.push(source, declaration, { dryRun: true });
  const plan = withProtect(dry.plan, target?.config.protect, target?.name);
  checkAllowTargets(allow, declaration, plan);
  if (savedVersion !== undefined && plan.baseVersion !== savedVersion) {
    const since = await pushesSince(client, source, savedVersion);
    throw new CliError(`The source ${source} changed since the plan was saved (planned against version ${savedVersion}, now ${plan.baseVersion})${since}.`, {
      hint: 'Run `schemasync plan --out <file>` again and review the new plan.',
    });
  }
  // Same source version, yet runtime schema edits and records written since can change
  // what the push would do: apply only what the reviewer saw.
  const drift = savedPlan !== undefined ? planDrift(savedPlan, plan) : undefined;
  if (drift !== undefined) {
    throw new CliError(`The instance changed since the plan was saved: ${drift}; nothing was applied.`, {
      hint: 'Run `schemasync plan --out <file>` again and review the new plan.',
    });
  }
  if (!json) ctx.stdout.write(renderPlanText(plan, ctx.colors, client.baseUrl, allow !== undefined ? { allow } : {}));

  const refused = refusal(plan, { ...(allow !== undefined ? { allowDestructive: allow } : {}), currentVersion: plan.baseVersion });
  if (refused) {
    if (json) ctx.stdout.write(renderPlanJson(plan, { applied: false, error: { status: refused.status, code: refused.code, message: refused.message } }));
    ctx.stderr.write(`${formatServiceErrorLine(refused.status, refused.code, refused.message)}\n`);
    if (refused.code === 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED') {
      // only what the flag leaves uncovered; the fix below names the whole list to pass
      for (const s of uncoveredDestructive(plan, allow)) {
        // the planner's reason already names the sample ids (engine/plan/messages.ts): add them only without one
        const ids = s.reason === undefined && s.sampleIds && s.sampleIds.length > 0 ? `, e.g. ${s.sampleIds.join(', ')}` : '';
        ctx.stderr.write(`  - ${s.target}: ${s.reason ?? s.action} (${s.affected ?? 0} affected${ids})\n`);
      }
    }
    if (refused.details.fix) ctx.stderr.write(`  fix: ${refused.details.fix}\n`);
    return 1;
  }
  if (plan.steps.length === 0) {
    // Nothing changes in the schema, but the source records this declaration (a renamedFrom
    // hint, a reordering): GET /schema/sources/:id must return what was last synced.
    const res = await client.sources.push(source, declaration, { ifMatch: plan.baseVersion });
    if (json) ctx.stdout.write(renderPlanJson(plan, { applied: false, version: res.version }));
    return 0;
  }

  if (!ctx.options.yes && process.stdin.isTTY && !json) {
    if (!(await confirm(`Apply ${plan.steps.length} change${plan.steps.length === 1 ? '' : 's'} to ${client.baseUrl}? [y/N] `, ctx.stdout))) {
      ctx.stderr.write('Cancelled; nothing was changed.\n');
      return 1;
    }
  }

  try {
    const res = await client.sources.push(source, declaration, {
      ...(allow !== undefined ? { allowDestructive: allow } : {}),
      ifMatch: plan.baseVersion,
      // What was reviewed (the saved plan) or shown (this dry run): the instance applies that
      // plan or refuses, checked inside its apply transaction (contract.md §3), so a record
      // written since the dry run cannot change what is lost unseen.
      expectPlan: savedHash ?? plan.planHash,
    });
    if (json) ctx.stdout.write(renderPlanJson(res.plan, { applied: res.applied, version: res.version }));
    else ctx.stdout.write(ctx.colors.green(`Applied: source ${source} is now at version ${res.version}.\n`));
    return 0;
  } catch (e) {
    if (e instanceof ServiceRequestError) e.hint = hintFor(e.code, plan);
    throw e;
  }
};

function hintFor(code: string | undefined, plan: Plan): string | undefined {
  switch (code) {
    case 'SCHEMA_CONFLICT':
      return 'The source or its data changed since the plan was made (a push, or records written since): run `schemasync plan` again and review it.';
    case 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED': {
      // the dry run's losses; none when the data changed since it (the refusal is masked, §3)
      const targets = approvalTargets(plan);
      return allowLossHint(targets.length > 0 ? targets : ['<targets>']);
    }
    case 'SCHEMA_SYNC_FAILED':
      return 'The push failed partway and was rolled back; the instance is unchanged.';
    default:
      return undefined;
  }
}

async function confirm(question: string, out: NodeJS.WritableStream): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: out });
  try {
    const answer = await rl.question(question);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/**
 * How `now` differs from the saved plan, in words, or undefined when it does what the
 * reviewer saw: the same steps in the same order, each with the same field changes and
 * the same consequences for stored data (destructive or not, values lost or touched,
 * empty values backfilled). Sample ids are examples, not consequences, so they may move.
 */
function planDrift(saved: Plan, now: Plan): string | undefined {
  const key = (s: Step) => `${s.action} ${s.target}`;
  if (saved.steps.length !== now.steps.length || saved.steps.some((s, i) => key(s) !== key(now.steps[i]!))) {
    return 'the push would now do other steps than the saved plan shows';
  }
  for (const [i, was] of saved.steps.entries()) {
    const is = now.steps[i]!;
    const seen = (s: Step) => ({
      destructive: s.destructive,
      affected: s.affected ?? 0,
      backfill: (s.action === 'change_attribute' ? s.backfill : undefined) ?? 0,
      changes: 'changes' in s ? changeList(s.changes) : '',
    });
    const [a, b] = [seen(was), seen(is)];
    const moved = (Object.keys(a) as (keyof typeof a)[]).filter((f) => a[f] !== b[f]);
    if (moved.length > 0) {
      return `${is.target} would now do something else than the saved plan shows (${moved.map((f) => `${f} ${show(a[f])} → ${show(b[f])}`).join(', ')})`;
    }
  }
  return undefined;
}

const show = (v: unknown): string => (v === '' ? '(none)' : String(v));

/** What landed since a saved plan, from the source's history (contract.md §3), for the refusal. */
async function pushesSince(client: SchemaClient, source: string, version: number): Promise<string> {
  try {
    const { entries } = await client.sources.history(source, { limit: 20 });
    const newer = entries.filter((e) => e.version > version);
    if (newer.length === 0) return '';
    const one = (e: (typeof newer)[number]) =>
      `v${e.version} at ${e.appliedAt} by ${e.key ? `key "${e.key.name}"` : 'an unknown key'} (${e.steps.create} create, ${e.steps.change} change, ${e.steps.drop} drop${e.destructive.length > 0 ? `; lost data in ${e.destructive.join(', ')}` : ''})`;
    return `: pushed since: ${newer.map(one).join('; ')}`;
  } catch {
    return ''; // an instance without history (an older server) still gets the refusal
  }
}
