import type { Colors } from '../context.js';

/**
 * Rendering located diagnostics (declaration brief item 5): text for people, one JSON
 * document for scripts, GitHub workflow commands for annotations on a pull request.
 * Structural types, so this file imports nothing from the engine at startup.
 */
export interface RenderDiagnostic {
  severity: 'error' | 'warning';
  code?: string;
  message: string;
  path: (string | number)[];
  suggestion?: string;
  fix?: string;
  /** Relative to the working directory. */
  file: string;
  line: number;
  column: number;
}

export interface Summary {
  files: number;
  objects: number;
  views: number;
  roles?: number;
}

/** What was read, counted from the files loaded, whether or not they hold errors. */
export function summaryOf(files: readonly { objects: readonly string[]; views: readonly string[]; roles?: readonly string[] }[]): Summary {
  const roles = files.reduce((n, f) => n + (f.roles?.length ?? 0), 0);
  return {
    files: files.length,
    objects: files.reduce((n, f) => n + f.objects.length, 0),
    views: files.reduce((n, f) => n + f.views.length, 0),
    ...(roles > 0 ? { roles } : {}),
  };
}

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export function withSuggestion(d: { message: string; suggestion?: string }): string {
  return d.suggestion ? `${d.message} (did you mean "${d.suggestion}"?)` : d.message;
}

export function renderText(list: readonly RenderDiagnostic[], summary: Summary, c: Colors): string {
  const lines: string[] = [];
  for (const d of list) {
    const sev = d.severity === 'error' ? c.red('error') : c.yellow('warning');
    const code = d.code ? ` ${c.dim(d.code)}` : '';
    lines.push(`${c.bold(`${d.file}:${d.line}:${d.column}`)} ${sev}${code} ${withSuggestion(d)}`);
    if (d.fix) lines.push(`  ${c.dim(d.fix)}`);
  }
  const errors = list.filter((d) => d.severity === 'error').length;
  const warnings = list.length - errors;
  const scope = `${plural(summary.files, 'file')}, ${plural(summary.objects, 'object')}, ${plural(summary.views, 'view')}${summary.roles ? `, ${plural(summary.roles, 'role')}` : ''}`;
  if (errors > 0) {
    lines.push(c.red(`✖ ${plural(errors, 'error')}${warnings ? `, ${plural(warnings, 'warning')}` : ''} (${scope})`));
  } else {
    lines.push(c.green(`✔ valid: ${scope}${warnings ? c.yellow(`, ${plural(warnings, 'warning')}`) : ''}`));
  }
  return `${lines.join('\n')}\n`;
}

export function renderJson(list: readonly RenderDiagnostic[], summary: Summary): string {
  const errors = list.filter((d) => d.severity === 'error').length;
  return `${JSON.stringify({ valid: errors === 0, errors, warnings: list.length - errors, ...summary, diagnostics: list }, null, 2)}\n`;
}

// GitHub workflow commands: data escapes %, CR, LF; properties also , and :.
const escapeData = (s: string): string => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (s: string): string => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

export function renderGithub(list: readonly RenderDiagnostic[]): string {
  return list
    .map((d) => {
      const props = [`file=${escapeProperty(d.file)}`, `line=${d.line}`, `col=${d.column}`];
      if (d.code) props.push(`title=${escapeProperty(d.code)}`);
      const text = d.fix ? `${withSuggestion(d)}. ${d.fix}` : withSuggestion(d);
      return `::${d.severity} ${props.join(',')}::${escapeData(text)}\n`;
    })
    .join('');
}
