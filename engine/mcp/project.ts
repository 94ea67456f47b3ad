import { existsSync } from 'node:fs';
import { displayPath, loadProject, sortDiagnostics } from '../declaration/load.js';
import { ToolFailure } from './failures.js';
import type { ProjectLoader } from './tools.js';

/**
 * plan_sync's default declaration over stdio: the project's files, read afresh on every
 * call (the agent may be planning an edit it just made), checked offline first like
 * `schemasync plan` — a declaration with errors is reported as file:line:col and nothing
 * is sent.
 */
export function projectLoader(configPath: string, cwd: string): ProjectLoader {
  return async () => {
    if (!existsSync(configPath)) {
      throw new ToolFailure(`No project file at ${displayPath(configPath, cwd)}: pass \`source\` and \`declaration\`, or start schemasync mcp in the project (or with --config).`);
    }
    const result = await loadProject({ configPath, cwd });
    const errors = sortDiagnostics(result.diagnostics).filter((d) => d.severity === 'error');
    if (!result.declaration || !result.config || errors.length > 0) {
      const lines = errors.map((d) => `  ${displayPath(d.file, cwd)}:${d.line}:${d.column} ${d.message}${d.suggestion ? ` (did you mean "${d.suggestion}"?)` : ''}`);
      throw new ToolFailure([`The declaration has ${errors.length} error${errors.length === 1 ? '' : 's'}; nothing was sent to the instance.`, ...lines].join('\n'));
    }
    return { source: result.config.source, declaration: result.declaration };
  };
}
