import { describePath, type Diagnostic, type Path } from './diagnostic.js';

/**
 * What every semantic rule (rules.ts, role-rules.ts) reports into, and the reporting helpers
 * they share: a diagnostic is added unless the JSON Schema already reported its path.
 */
export interface RuleContext {
  out: Diagnostic[];
  skip: Set<string>;
  /** Prepended when describing (validateAttributeInput uses ['attribute', name]). */
  describeAs?: Path;
  /**
   * Declaration files that could not be read (syntax errors): any of them may declare an
   * object another file refers to, so "not declared" is only a warning naming them.
   */
  unreadable?: readonly string[];
  /**
   * Objects the instance holds (the push route knows them; `validate` offline does not): a
   * role permission may name one that this declaration does not (contract.md §2).
   */
  storedObjects?: ReadonlySet<string>;
}

/** ` (a.yaml could not be read and may declare it)`, or '' when every file was read. */
export function unreadableNote(ctx: RuleContext): string {
  const files = ctx.unreadable ?? [];
  if (files.length === 0) return '';
  return ` (${files.join(', ')} could not be read and may declare it)`;
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const key = (path: Path): string => JSON.stringify(path);

export function add(ctx: RuleContext, d: Diagnostic): void {
  if (ctx.skip.has(key(d.path))) return;
  ctx.out.push(d);
}

export function subject(ctx: RuleContext, path: Path): string {
  return capital(describePath([...(ctx.describeAs ?? []), ...path]));
}

/**
 * Whether the schema already reported `path` or anything under it: `options: [1, 2]` is
 * reported at `options.0`, and a default checked against broken options would only echo it.
 */
export function reported(ctx: RuleContext, path: Path): boolean {
  const exact = key(path);
  const under = exact.slice(0, -1) + ',';
  for (const k of ctx.skip) if (k === exact || k.startsWith(under)) return true;
  return false;
}
