import { allowDestructiveFlag, approvalTargets } from '../../engine/plan/approval.js';
import { uncoveredDestructive } from '../../engine/plan/policy.js';
import type { AllowDestructive, Plan } from '../../engine/plan/types.js';
import type { Colors } from '../context.js';
import { stepLine, summaryLine } from './plan.js';

/**
 * `plan --format markdown` (contract.md §4, §7): one pull-request comment. The first line
 * is a hidden marker naming the source and target, so a workflow finds its own comment and
 * edits it in place rather than adding one per push; the last hidden line carries the full
 * planHash the merge job checks before it syncs. Every text that comes from the instance
 * or the files is escaped: a comment is rendered as HTML by GitHub and must not be
 * steered by a record value or a name.
 */
export const commentMarker = (source: string, target: string | undefined): string => `<!-- schemasync:plan:${source}:${target ?? 'default'} -->`;
export const HASH_MARKER = /<!-- schemasync:planHash:([0-9a-f]{64}) -->/;

/** Inline markdown text: no HTML, no table breaks, no code spans escaping their ticks. */
export function md(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/[`*_[\]]/g, (c) => `\\${c}`)
    .replace(/\r?\n/g, ' ');
}
const code = (s: string): string => `<code>${md(s)}</code>`;

export interface MarkdownContext {
  target: string | undefined;
  baseUrl: string;
  /** The approval the target already gives (its `allowDestructive`). */
  allow?: AllowDestructive;
}

const plain = new Proxy({} as Colors, { get: () => (s: unknown) => String(s) });

export function renderPlanMarkdown(plan: Plan, ctx: MarkdownContext): string {
  const out: string[] = [commentMarker(plan.source, ctx.target)];
  const where = ctx.target !== undefined ? `target ${code(ctx.target)}` : code(ctx.baseUrl);
  out.push(`### schemasync plan: ${code(plan.source)} on ${where}`, '');
  const uncovered = uncoveredDestructive(plan, ctx.allow);
  const verdict =
    plan.conflicts.length > 0
      ? `❌ **Blocked**: ${plan.conflicts.length} conflict${plan.conflicts.length === 1 ? '' : 's'}; this plan cannot be applied.`
      : plan.steps.length === 0
        ? '✅ **No changes**: the instance matches the declaration.'
        : uncovered.length > 0
          ? `⚠️ **Needs approval**: ${uncovered.length} destructive step${uncovered.length === 1 ? '' : 's'} would lose data.`
          : `✅ **Ready to apply**: ${plan.steps.length} step${plan.steps.length === 1 ? '' : 's'}, no unapproved data loss.`;
  out.push(verdict, '');
  if (plan.steps.length > 0) {
    out.push('| | Step | Target | Detail | Affected |', '|---|---|---|---|---|');
    for (const s of plan.steps) {
      const line = stepLine(s, plain).trim();
      const sign = line.charAt(0);
      const detail = line.slice(2).replace(/ \[destructive: [^\]]*\]/, '');
      out.push(`| ${sign === '-' ? '➖' : sign === '+' ? '➕' : '✏️'} | ${s.action}${s.destructive ? ' ⚠️' : ''} | ${code(s.target)} | ${md(detail)} | ${s.affected ?? 0} |`);
    }
    out.push('');
  }
  if (plan.conflicts.length > 0) {
    out.push('#### ❗ Conflicts', '');
    for (const k of plan.conflicts) {
      const samples = k.sampleIds && k.sampleIds.length > 0 ? ` Sample ids: ${k.sampleIds.map(code).join(', ')}.` : '';
      out.push(`- ${code(k.code)} ${code(k.target)}: ${md(k.message)}${samples}${k.fix ? `<br>**Fix:** ${md(k.fix)}` : ''}`);
    }
    out.push('');
  }
  const destructive = plan.steps.filter((s) => s.destructive);
  if (destructive.length > 0) {
    out.push('#### ⚠️ Destructive steps', '');
    for (const s of destructive) {
      const samples = s.sampleIds && s.sampleIds.length > 0 ? ` (e.g. ${s.sampleIds.map(code).join(', ')})` : '';
      out.push(`- ${code(s.target)}: ${md(s.reason ?? s.action)}; ${s.affected ?? 0} affected${samples}${uncovered.includes(s) ? '' : ' (approved by the target)'}`);
    }
    if (uncovered.length > 0) {
      out.push(
        '',
        `Approve exactly these losses: ${code(`schemasync sync${ctx.target !== undefined ? ` --target ${ctx.target}` : ''} --plan plan.json ${allowDestructiveFlag(approvalTargets(plan))}`)}` +
          ` (with the example workflow: add the label ${uncovered.map((s) => code(`allow-destructive:${s.target}`)).join(' ')} to this pull request).`,
    );
    }
    out.push('');
  }
  out.push(`${md(summaryLine(plan))}`, '');
  out.push(`<sub>Target ${ctx.target !== undefined ? code(ctx.target) : '(none)'} · ${code(ctx.baseUrl)} · source ${code(plan.source)} v${plan.baseVersion} · planHash ${code(plan.planHash.slice(0, 12))}</sub>`);
  out.push(`<!-- schemasync:planHash:${plan.planHash} -->`);
  return `${out.join('\n')}\n`;
}
