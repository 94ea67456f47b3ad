import type { DriftItem, DriftKind, DriftReport } from '../../engine/plan/drift.js';
import type { Colors } from '../context.js';
import { md } from './markdown.js';

/** `schemasync drift` output (contract.md §4): text, json and a pull-request/issue markdown. */
const WORDS: Record<DriftKind, string> = {
  pending: 'pending edit (the files are ahead of the instance: run sync)',
  runtime: 'runtime change (the instance changed outside the source: pull it into the files, or sync to undo it)',
  both: 'both (the files and the instance each changed since the last sync: reconcile by hand)',
};

const show = (v: unknown): string => (v === undefined ? '(absent)' : JSON.stringify(v));

function states(i: DriftItem): string {
  return `applied ${show(i.applied)} · instance ${show(i.instance)} · files ${show(i.files)}`;
}

export function driftSummary(r: DriftReport): string {
  if (r.items.length === 0) return `No drift: the instance, the files and the last applied declaration of ${r.source} (v${r.version}) agree.`;
  return `Drift in ${r.source} (v${r.version}): ${r.summary.pending} pending edit${r.summary.pending === 1 ? '' : 's'}, ${r.summary.runtime} runtime change${r.summary.runtime === 1 ? '' : 's'}, ${r.summary.both} changed on both sides.`;
}

export function renderDriftText(r: DriftReport, c: Colors, where: string): string {
  const lines = [c.bold(`Source ${r.source} at version ${r.version} on ${where}`)];
  for (const i of r.items) {
    const colour = i.kind === 'pending' ? c.yellow : i.kind === 'runtime' ? c.cyan : c.red;
    lines.push(`  ${colour(i.kind.padEnd(7))} ${i.target}: ${WORDS[i.kind]}`, c.dim(`          ${states(i)}`));
  }
  lines.push('', driftSummary(r));
  return `${lines.join('\n')}\n`;
}

export function renderDriftMarkdown(r: DriftReport, target: string | undefined, baseUrl: string): string {
  const out = [`<!-- schemasync:drift:${r.source}:${target ?? 'default'} -->`, `### schemasync drift: <code>${md(r.source)}</code> on ${target !== undefined ? `target <code>${md(target)}</code>` : `<code>${md(baseUrl)}</code>`}`, ''];
  out.push(r.items.length === 0 ? `✅ ${md(driftSummary(r))}` : `⚠️ ${md(driftSummary(r))}`, '');
  if (r.items.length > 0) {
    out.push('| Kind | Target | Applied | Instance | Files |', '|---|---|---|---|---|');
    for (const i of r.items) out.push(`| ${i.kind} | <code>${md(i.target)}</code> | ${md(show(i.applied))} | ${md(show(i.instance))} | ${md(show(i.files))} |`);
    out.push('', ...(['pending', 'runtime', 'both'] as const).filter((k) => r.summary[k] > 0).map((k) => `- **${k}**: ${md(WORDS[k])}`));
  }
  return `${out.join('\n')}\n`;
}
