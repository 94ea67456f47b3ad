import type { AttributeSpec } from '../../engine/model/attribute.js';
import type { RoleDecl } from '../../engine/model/roles.js';
import { allowLossHint, approvalTargets } from '../../engine/plan/approval.js';
import { uncoveredDestructive } from '../../engine/plan/policy.js';
import type { AllowDestructive, Conflict, FieldChange, Plan, Step, StepAction } from '../../engine/plan/types.js';
import type { Colors } from '../context.js';
import { plural } from './diagnostics.js';

/**
 * Rendering a plan (contract.md §4): `+` create, `~` change (old → new), `-` drop,
 * `!` conflict; destructive steps marked with what they lose. One line per step, so a
 * plan reads like `terraform plan` and diffs well in review.
 */
type Sign = '+' | '~' | '-';

const SIGN: Record<StepAction, Sign> = {
  create_object: '+',
  add_attribute: '+',
  create_view: '+',
  rename_object: '~',
  rename_attribute: '~',
  change_object: '~',
  change_attribute: '~',
  change_view: '~',
  drop_object: '-',
  drop_attribute: '-',
  drop_view: '-',
  create_role: '+',
  change_role: '~',
  rename_role: '~',
  drop_role: '-',
};

const show = (v: unknown): string => (v === undefined ? '(none)' : typeof v === 'string' ? v : JSON.stringify(v));

export function describeSpec(spec: Omit<AttributeSpec, 'name'>): string {
  const parts: string[] = [spec.type];
  if (spec.required) parts.push('required');
  if (spec.unique) parts.push('unique');
  for (const f of ['min', 'max', 'minLength', 'maxLength', 'pattern', 'target', 'options', 'default'] as const) {
    if (spec[f] !== undefined) parts.push(`${f} ${show(spec[f])}`);
  }
  if (spec.multiple !== undefined) parts.push(`multiple ${spec.multiple}`);
  return parts.join(' ');
}

export const changeList = (changes: FieldChange[]): string =>
  changes.map((c) => (c.field === 'required' || c.field === 'unique' ? `${c.field} ${Boolean(c.from)} → ${Boolean(c.to)}` : `${c.field} ${show(c.from)} → ${show(c.to)}`)).join(', ');

const TEXT: { [A in StepAction]: (s: Extract<Step, { action: A }>) => string } = {
  create_object: (s) => `object ${s.object} (${plural(Object.keys(s.decl.attributes).length, 'attribute')})`,
  add_attribute: (s) => `${s.target}: ${describeSpec(s.spec)}`,
  create_view: (s) => `${s.target} on ${s.decl.object}`,
  rename_object: (s) => `object ${s.from} → ${s.to}`,
  rename_attribute: (s) => `${s.object}.${s.from} → ${s.target}`,
  change_object: (s) => `object ${s.object}: ${changeList(s.changes)}`,
  change_attribute: (s) =>
    `${s.target}: ${s.changes.length > 0 ? changeList(s.changes) : 'no field changes'}${s.adopt ? ' (adopts the runtime attribute)' : ''}${s.label === 'widening' ? ' (widening, converted in place)' : ''}`,
  change_view: (s) => `${s.target}: ${changeList(s.changes)}`,
  drop_object: (s) => `object ${s.object}`,
  drop_attribute: (s) => s.target,
  drop_view: (s) => s.target,
  create_role: (s) => `role ${s.role}: ${grantsText(s.decl)}`,
  change_role: (s) => `role ${s.role}: ${roleChanges(s.from, s.to)}`,
  rename_role: (s) => `role ${s.from} → ${s.to}`,
  drop_role: (s) => `role ${s.role}`,
};

/** `deal read,create; company read; schema read` — what a role grants, on one line. */
function grantsText(d: RoleDecl): string {
  const parts = d.permissions.map((p) => `${p.object} ${p.actions.join(',')}`);
  if (d.schema && d.schema !== 'none') parts.push(`schema ${d.schema}`);
  return parts.join('; ') || 'no permissions';
}

/** Per object, the actions gained (+) and lost (-): `~ role sales: deal +delete` (contract.md §2 example). */
function roleChanges(from: RoleDecl, to: RoleDecl): string {
  const actions = (d: RoleDecl) => {
    const m = new Map<string, Set<string>>();
    for (const p of d.permissions) for (const a of p.actions) m.set(p.object, (m.get(p.object) ?? new Set()).add(a));
    return m;
  };
  const a = actions(from);
  const b = actions(to);
  const parts: string[] = [];
  for (const object of new Set([...a.keys(), ...b.keys()])) {
    const was = a.get(object) ?? new Set();
    const now = b.get(object) ?? new Set();
    const delta = [...[...now].filter((x) => !was.has(x)).map((x) => `+${x}`), ...[...was].filter((x) => !now.has(x)).map((x) => `-${x}`)];
    if (delta.length) parts.push(`${object} ${delta.join(' ')}`);
  }
  if ((from.schema ?? 'none') !== (to.schema ?? 'none')) parts.push(`schema ${from.schema ?? 'none'} → ${to.schema ?? 'none'}`);
  for (const f of ['label', 'description'] as const) if (from[f] !== to[f]) parts.push(`${f} ${show(from[f])} → ${show(to[f])}`);
  return parts.join(', ') || 'no changes';
}

export function stepLine(step: Step, c: Colors): string {
  const sign = SIGN[step.action];
  const colour = sign === '+' ? c.green : sign === '-' ? c.red : c.yellow;
  const body = (TEXT[step.action] as (s: Step) => string)(step);
  const n = step.affected ?? 0;
  const unit = step.action === 'drop_object' ? (n === 1 ? 'record' : 'records') : n === 1 ? 'value' : 'values';
  const loss = step.destructive ? ` ${c.red(c.bold(`[destructive: ${n} ${unit}]`))}` : '';
  const reason = step.reason ? c.dim(` — ${step.reason}`) : '';
  return `  ${colour(sign)} ${body}${loss}${reason}`;
}

export function conflictLines(conflict: Conflict, c: Colors): string[] {
  const lines = [`  ${c.red('!')} ${c.bold(conflict.code)} ${conflict.target}: ${conflict.message}`];
  if (conflict.fix) lines.push(`      fix: ${conflict.fix}`);
  return lines;
}

export function summaryLine(plan: Plan): string {
  const s = plan.summary;
  if (plan.steps.length === 0 && plan.conflicts.length === 0) return 'No changes. The instance matches the declaration.';
  const parts = [`${s.create} to create`, `${s.change} to change`, `${s.drop} to drop`];
  let line = `Plan: ${parts.join(', ')}`;
  if (s.destructive > 0) line += `; ${s.destructive} destructive`;
  if (s.conflicts > 0) line += `; ${s.conflicts} conflict${s.conflicts === 1 ? '' : 's'}`;
  return `${line}.`;
}

/** `allow`: the --allow-destructive in force (sync), so steps it covers need no reminder. */
export function renderPlanText(plan: Plan, c: Colors, where?: string, options: { allow?: AllowDestructive } = {}): string {
  const lines: string[] = [];
  lines.push(c.bold(`Source ${plan.source} at version ${plan.baseVersion}${where ? ` on ${where}` : ''}`));
  for (const s of plan.steps) lines.push(stepLine(s, c));
  if (plan.conflicts.length > 0) {
    lines.push('', c.red('Conflicts (the push would be refused):'));
    for (const k of plan.conflicts) lines.push(...conflictLines(k, c));
  }
  if (uncoveredDestructive(plan, options.allow).length > 0) lines.push('', c.yellow(allowLossHint(approvalTargets(plan))));
  lines.push('', summaryLine(plan));
  return `${lines.join('\n')}\n`;
}

export function renderPlanJson(plan: Plan, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ ...extra, ...plan }, null, 2)}\n`;
}

// GitHub workflow commands (same escaping as cli/render/diagnostics.ts).
const escapeData = (s: string): string => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (s: string): string => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

export interface Location {
  file: string;
  line: number;
  column: number;
}

/** Conflicts are errors, destructive steps warnings, the rest notices, each at its file:line when declared. */
export function renderPlanGithub(plan: Plan, locate: (target: string) => Location | undefined): string {
  const out: string[] = [];
  const emit = (level: 'error' | 'warning' | 'notice', target: string, title: string, text: string) => {
    const at = locate(target);
    const props = at ? [`file=${escapeProperty(at.file)}`, `line=${at.line}`, `col=${at.column}`] : [];
    props.push(`title=${escapeProperty(title)}`);
    out.push(`::${level} ${props.join(',')}::${escapeData(text)}\n`);
  };
  const plain = identityColors();
  for (const k of plan.conflicts) emit('error', k.target, k.code, k.fix ? `${k.message} Fix: ${k.fix}` : k.message);
  for (const s of plan.steps) {
    emit(s.destructive ? 'warning' : 'notice', s.target, s.destructive ? 'destructive' : s.action, stepLine(s, plain).trim());
  }
  out.push(`${summaryLine(plan)}\n`);
  return out.join('');
}

function identityColors(): Colors {
  const id = (s: unknown) => String(s);
  return new Proxy({} as Colors, { get: () => id });
}
