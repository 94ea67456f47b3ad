import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { displayPath, loadProjectSync, sortDiagnostics, type ProjectLoadResult } from '../../engine/declaration/load.js';
import { locate } from '../../engine/declaration/locate.js';
import { didYouMean, unknownAllowTargets } from '../../engine/plan/policy.js';
import type { Declaration } from '../../engine/model/declaration.js';
import type { Plan } from '../../engine/plan/types.js';
import type { CommandContext } from '../context.js';
import { CliError } from '../errors.js';
import { configPathOf } from '../instance.js';
import { renderGithub, renderText, summaryOf, type RenderDiagnostic } from '../render/diagnostics.js';
import type { Location } from '../render/plan.js';

/**
 * What plan, sync and pull share: loading the project (declaration errors as
 * file:line:col, exit 1, before any network call) and mapping plan targets back to the
 * declaration file and line for `--format github`.
 */
export interface LoadedProject {
  source: string;
  declaration: Declaration;
  result: ProjectLoadResult;
}

export function loadOrFail(ctx: CommandContext<{ format?: string }>): LoadedProject {
  const configPath = configPathOf(ctx);
  if (!existsSync(configPath)) {
    throw new CliError(`No project file at ${displayPath(configPath, ctx.cwd)}`, {
      hint: 'Run `schemasync init` to create one, or pass --config <file>.',
    });
  }
  const result = loadProjectSync({ configPath, cwd: ctx.cwd });
  const list: RenderDiagnostic[] = sortDiagnostics(result.diagnostics).map((d) => ({
    severity: d.severity, message: d.message, path: d.path, file: displayPath(d.file, ctx.cwd), line: d.line, column: d.column,
    ...(d.code !== undefined ? { code: d.code } : {}), ...(d.suggestion !== undefined ? { suggestion: d.suggestion } : {}), ...(d.fix !== undefined ? { fix: d.fix } : {}),
  }));
  if (!result.declaration || !result.config || list.some((d) => d.severity === 'error')) {
    if (ctx.options.format === 'github') ctx.stdout.write(renderGithub(list));
    else ctx.stderr.write(renderText(list, summaryOf(result.files), ctx.colors));
    throw new CliError('The declaration has errors; nothing was sent to the instance.', { hint: 'Fix them (see above) and run again.', diagnostics: list });
  }
  return { source: result.config.source, declaration: result.declaration, result };
}

/** target (`deal`, `deal.amount`, `view:open_deals`) → where it is declared. */
export function locator(project: LoadedProject, cwd: string): (target: string) => Location | undefined {
  const cache = new Map<string, { doc: ReturnType<typeof parseDocument>; lc: LineCounter }>();
  const open = (file: string) => {
    let hit = cache.get(file);
    if (!hit) {
      const lc = new LineCounter();
      hit = { doc: parseDocument(readFileSync(file, 'utf8'), { lineCounter: lc }), lc };
      cache.set(file, hit);
    }
    return hit;
  };
  return (target) => {
    const isView = target.startsWith('view:');
    const [object, attribute] = isView ? [target.slice(5), undefined] : target.split('.', 2);
    if (object === undefined) return undefined;
    const file = project.result.files.find((f) => (isView ? f.views : f.objects).includes(object));
    if (!file) return undefined;
    const { doc, lc } = open(file.path);
    const path = isView ? ['views', object] : attribute !== undefined ? ['objects', object, 'attributes', attribute] : ['objects', object];
    const pos = locate(doc, lc, path, 'key');
    return { file: relative(cwd, file.path) || file.path, line: pos.line, column: pos.column };
  };
}

/** The file `plan --out` writes and `sync --plan` reads. */
export interface SavedPlan {
  schemasyncPlan: 1;
  source: string;
  baseUrl: string;
  /** The source version the plan was made against: sync --plan sends it as if-match. */
  baseVersion: number;
  /** The plan's hash: sync --plan sends it as expectPlan (absent in plans saved before it existed). */
  planHash?: string;
  /** The target of schemasync.yaml the plan was made for. */
  target?: string;
  declaration: Declaration;
  plan: Plan;
  createdAt: string;
}

export function readSavedPlan(file: string): SavedPlan {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new CliError(`Cannot read the saved plan ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const p = raw as Partial<SavedPlan>;
  if (p?.schemasyncPlan !== 1 || typeof p.baseVersion !== 'number' || typeof p.source !== 'string' || !p.declaration) {
    throw new CliError(`${file} is not a plan written by \`schemasync plan --out\``);
  }
  return p as SavedPlan;
}

/**
 * `--allow-destructive` as commander gives it: true (bare flag), a comma list, or absent.
 * An empty value (`--allow-destructive "$UNSET_CI_VARIABLE"`) is refused: read as the bare
 * flag it would allow every loss, the opposite of what an empty list means (issue 4).
 */
export function parseAllow(v: unknown): boolean | string[] | undefined {
  if (v === true) return true;
  if (typeof v === 'string') {
    const list = v.split(',').map((s) => s.trim()).filter(Boolean);
    if (list.length === 0) {
      throw new CliError('--allow-destructive was given an empty list of targets; nothing was sent to the instance.', {
        hint: 'Pass the targets to allow (--allow-destructive deal.amount,legacy), the bare flag to allow every loss, or leave the flag out.',
      });
    }
    return list;
  }
  return undefined;
}

/** `sync --allow-destructive` with a target that names nothing is refused before any push (engine/plan/policy.ts). */
export function checkAllowTargets(allow: boolean | string[] | undefined, declaration: Declaration, plan: Plan): void {
  const unknown = unknownAllowTargets(allow, declaration, plan);
  if (unknown.length === 0) return;
  throw new CliError(`--allow-destructive names ${unknown.map((u) => `"${u.target}"`).join(', ')}, which the declaration and the plan do not know; nothing was sent to the instance.`, {
    hint: didYouMean(unknown) ?? 'Name objects or attributes as `object` or `object.attribute` (see `schemasync plan`).',
  });
}
