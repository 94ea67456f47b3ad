import { closest } from '../engine/declaration/suggest.js';
import type { TargetConfig } from '../engine/model/declaration.js';
import type { CommandContext } from './context.js';
import { CliError } from './errors.js';
import { readConfigYaml } from './yaml-text.js';
import { isLoopbackUrl } from './loopback.js';

/**
 * Which target of `targets:` a command runs against (contract.md §7): `--target NAME`, else
 * env `SCHEMASYNC_TARGET`, else a target named `dev` if there is one (implicit: an explicit
 * `SCHEMASYNC_BASE_URL` outranks it, cli/instance.ts), else none (the top-level baseUrl).
 * The file's shape is checked by the project schema when it loads; here only the name.
 */
export interface PickedTarget {
  name: string;
  config: TargetConfig;
  /** Named by --target or SCHEMASYNC_TARGET, rather than the implicit `dev`. */
  explicit: boolean;
}

type TargetContext = Pick<CommandContext, 'cwd' | 'global'>;

function targetsIn(configPath: string): Record<string, TargetConfig> | undefined {
  const t = (readConfigYaml(configPath) as { targets?: unknown } | null | undefined)?.targets;
  return t !== null && typeof t === 'object' && !Array.isArray(t) ? (t as Record<string, TargetConfig>) : undefined;
}

export function pickTarget(ctx: TargetContext, configPath: string, env: NodeJS.ProcessEnv): PickedTarget | undefined {
  const flag = ctx.global.target !== undefined && ctx.global.target !== '' ? ctx.global.target : undefined;
  const fromEnv = env['SCHEMASYNC_TARGET'] !== undefined && env['SCHEMASYNC_TARGET'] !== '' ? env['SCHEMASYNC_TARGET'] : undefined;
  const name = flag ?? fromEnv;
  const targets = targetsIn(configPath);
  if (name === undefined) {
    const dev = targets !== undefined && Object.hasOwn(targets, 'dev') ? targets['dev'] : undefined;
    return dev !== undefined && typeof dev.baseUrl === 'string' ? { name: 'dev', config: dev, explicit: false } : undefined;
  }
  const config = targets !== undefined && Object.hasOwn(targets, name) ? targets[name] : undefined;
  if (config === undefined || typeof config !== 'object' || typeof config.baseUrl !== 'string') {
    const names = Object.keys(targets ?? {});
    const near = closest(name, names);
    const via = flag !== undefined ? '--target' : 'SCHEMASYNC_TARGET';
    throw new CliError(`Unknown target "${name}" (${via}): schemasync.yaml ${names.length > 0 ? `has ${names.map((n) => `"${n}"`).join(', ')}` : 'declares no targets'}.`, {
      hint: near !== undefined ? `Did you mean "${near}"? (--target ${near})` : 'Add it under `targets:` in schemasync.yaml (see docs/ci.md), or pick one that is there.',
    });
  }
  return { name, config, explicit: true };
}

/** `watch: false` refuses watch and dev; unset, only loopback instances may be watched (§7). */
export function watchAllowed(target: PickedTarget): boolean {
  if (target.config.watch !== undefined) return target.config.watch;
  return isLoopbackUrl(target.config.baseUrl);
}

export function refuseUnwatched(target: PickedTarget, command: 'watch' | 'dev'): void {
  if (watchAllowed(target)) return;
  throw new CliError(`Target "${target.name}" does not allow ${command} (${target.config.watch === false ? 'watch: false' : 'not a loopback URL, and no watch: true'} in schemasync.yaml).`, {
    hint: `Review changes with \`schemasync plan --target ${target.name} --out plan.json\`, then \`schemasync sync --target ${target.name} --plan plan.json\`.`,
  });
}
