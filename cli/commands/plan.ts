import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { commandName } from '../command-name.js';
import { createTwoFilesPatch } from 'diff';
import { stringify } from 'yaml';
import type { Declaration } from '../../engine/model/declaration.js';
import { withoutRenamedFrom } from '../../engine/model/renames.js';
import type { Plan } from '../../engine/plan/types.js';
import type { CommandRun } from '../context.js';
import { withProtect } from '../../engine/plan/protect.js';
import { CliError } from '../errors.js';
import { connect } from '../instance.js';
import { renderPlanMarkdown } from '../render/markdown.js';
import { renderPlanGithub, renderPlanJson, renderPlanText } from '../render/plan.js';
import { loadOrFail, locator, type SavedPlan } from './plan-support.js';
import { storedDeclaration } from './pull.js';
import { declOf } from '../../engine/plan/roles.js';

interface PlanOptions {
  diff?: boolean;
  format?: 'text' | 'json' | 'github' | 'markdown';
  detailedExitcode?: boolean;
  out?: string;
}

/**
 * What the instance holds for a source, as a declaration (the stored schema, so runtime
 * changes since the last push show in --diff too; empty before its first push).
 */

/** Without `renamedFrom` hints: they are instructions for one push, not part of the shape. */
function forDiff(d: Declaration): string {
  const objects: Record<string, unknown> = {};
  for (const name of Object.keys(d.objects ?? {}).sort()) {
    const o = withoutRenamedFrom(d.objects[name]!);
    const attributes: Record<string, unknown> = {};
    for (const [a, spec] of Object.entries(o.attributes ?? {})) attributes[a] = withoutRenamedFrom(spec);
    objects[name] = { ...o, attributes };
  }
  const views: Record<string, unknown> = {};
  for (const name of Object.keys(d.views ?? {}).sort()) views[name] = d.views[name];
  if (!d.roles || Object.keys(d.roles).length === 0) return stringify({ objects, views });
  const roles: Record<string, unknown> = {};
  for (const name of Object.keys(d.roles).sort()) roles[name] = declOf(d.roles[name]!);
  return stringify({ objects, views, roles });
}

export function exitCodeFor(plan: Plan, detailed: boolean): number {
  if (plan.conflicts.length > 0) return 1;
  if (detailed && plan.steps.length > 0) return 2;
  return 0;
}

/**
 * `schemasync plan` (contract.md §4): validate offline, ask the instance for a dry run,
 * print the plan. Exit 1 on declaration errors or conflicts; with --detailed-exitcode
 * 2 when changes are pending, 0 when there is nothing to do.
 */
export const run: CommandRun<PlanOptions> = async (ctx) => {
  try {
    return await planOnce(ctx);
  } catch (e) {
    // With --detailed-exitcode, 2 means "changes pending" and nothing else (contract.md §4):
    // a missing CI secret (no instance configured) must not read as pending changes.
    if (ctx.options.detailedExitcode === true && e instanceof CliError && e.exitCode === 2) {
      throw new CliError(e.message, { exitCode: 1, ...(e.hint !== undefined ? { hint: e.hint } : {}) });
    }
    throw e;
  }
};

const planOnce: CommandRun<PlanOptions> = async (ctx) => {
  // no instance is exit 2 (contract §4) whatever the files say, so resolve it first (no I/O)
  const { client, instance } = connect(ctx);
  const project = loadOrFail(ctx);
  const answer = await client.sources.push(project.source, project.declaration, { dryRun: true });
  // the target's protect list turns its refused steps into `!` conflicts (contract.md §7)
  const plan = withProtect(answer.plan, instance.target?.config.protect, instance.target?.name);
  const format = ctx.global.json ? 'json' : (ctx.options.format ?? 'text');

  if (ctx.options.out) {
    const saved: SavedPlan = {
      schemasyncPlan: 1, source: project.source, baseUrl: client.baseUrl, baseVersion: plan.baseVersion, planHash: plan.planHash,
      ...(instance.target ? { target: instance.target.name } : {}), declaration: project.declaration, plan, createdAt: new Date().toISOString(),
    };
    writeFileSync(resolve(ctx.cwd, ctx.options.out), `${JSON.stringify(saved, null, 2)}\n`);
  }

  if (format === 'json') ctx.stdout.write(renderPlanJson(plan));
  else if (format === 'github') ctx.stdout.write(renderPlanGithub(plan, locator(project, ctx.cwd)));
  else if (format === 'markdown') {
    const allow = instance.target?.config.allowDestructive;
    ctx.stdout.write(renderPlanMarkdown(plan, { target: instance.target?.name, baseUrl: client.baseUrl, ...(allow !== undefined ? { allow } : {}) }));
  }
  else ctx.stdout.write(renderPlanText(plan, ctx.colors, client.baseUrl));

  if (ctx.options.diff && format !== 'json' && format !== 'markdown') {
    const [before, after] = [forDiff(await storedDeclaration(client, project.source)), forDiff(project.declaration)];
    // Steps can come from the instance alone (a runtime attribute, data) while the texts
    // agree: a patch would then be a bare header, which reads like a broken diff.
    if (before === after) ctx.stdout.write(`\nNo differences between the stored and the declared YAML (${project.source} v${plan.baseVersion}).\n`);
    else ctx.stdout.write(`\n${colorPatch(createTwoFilesPatch(`stored (${project.source} v${plan.baseVersion})`, 'declared', before, after), ctx.colors)}`);
  }
  if (ctx.options.out && format === 'text') ctx.stdout.write(`Saved the plan to ${ctx.options.out}; apply it with: ${commandName()} sync --plan ${ctx.options.out}\n`);
  return exitCodeFor(plan, ctx.options.detailedExitcode === true);
};

function colorPatch(patch: string, c: import('../context.js').Colors): string {
  return patch
    .split('\n')
    .map((l) => (l.startsWith('+') && !l.startsWith('+++') ? c.green(l) : l.startsWith('-') && !l.startsWith('---') ? c.red(l) : l))
    .join('\n');
}
