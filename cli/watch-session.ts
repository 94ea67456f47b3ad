import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type { Declaration } from '../engine/model/declaration.js';
import type { AllowDestructive, Step, StepAction } from '../engine/plan/types.js';
import {
  startWatchLoop,
  type LoadOutcome,
  type LoopDiagnostic,
  type LoopEvent,
  type PushAnswer,
  type PushCall,
} from '../engine/watch/loop.js';
import { loadProject } from '../engine/declaration/load.js';
import { SchemaClient } from '../engine/sdk/index.js';
import { didYouMean } from '../engine/plan/policy.js';
import { withSuggestion } from './render/diagnostics.js';
import type { CommandContext } from './context.js';
import { CliError, formatServiceErrorLine } from './errors.js';
import { serviceHint } from './hints.js';
import { commandName } from './command-name.js';
import { credentialsCandidates, resolveInstance, sameUrl, type InstanceContext } from './instance.js';
import { parseAllow } from './commands/plan-support.js';
import { nodeFetch } from './node-fetch.js';

/**
 * What `watch` and `dev` share: the loop wired to the real loader, one log line per
 * event, and a clean stop on Ctrl-C (issue 6: exit code 0).
 */

export interface WatchRunOptions {
  configPath: string;
  debounceMs: number;
  allowDestructive: AllowDestructive;
  push: (source: string, declaration: Declaration, call: PushCall) => Promise<PushAnswer>;
  /** The command that applies held-back steps (without `--allow-destructive`). */
  syncCommand: string | (() => string);
  /** Resolves when the user asks to stop; defaults to the first SIGINT or SIGTERM. */
  stopSignal?: Promise<NodeJS.Signals>;
  /** Called after the first run has finished (dev prints its banner tail here). */
  onFirstRun?: () => void;
  /** Leave out the "up to date" lines (dev's --quiet: its request log is always off). */
  quiet?: boolean;
  /** Folders the watcher never looks into (dev's data folder). */
  ignoredPaths?: string[];
}

/** `--allow-destructive` for the loop: the same parser as `sync` (an empty list is refused), absent = nothing. */
export function parseAllowDestructive(value: unknown): AllowDestructive {
  return parseAllow(value) ?? false;
}

export function parseDebounce(value: unknown): number {
  const ms = Number(value ?? 75);
  if (!Number.isFinite(ms) || ms < 0 || ms > 60_000) {
    throw new CliError(`--debounce must be a number of milliseconds from 0 to 60000, got "${String(value)}"`);
  }
  return Math.round(ms);
}

/** The server a command line must reach: dev's own (its URL and data folder). */
export interface LocalServerTarget {
  baseUrl: string;
  dataDir: string;
  credentialsPath: string;
}

/**
 * `schemasync sync` as the user would type it here. For dev, the command must reach dev's
 * server: `--data <dir>` is added when the key would not come from dev's credentials.json
 * (another data folder, or an env key), and `--base-url` when the usual resolution
 * (cli/instance.ts: env, schemasync.yaml `baseUrl`, then credentials) would land
 * elsewhere — so the printed command works as printed and never carries the key itself.
 */
export function syncCommandFor(ctx: CommandContext<unknown>, server?: LocalServerTarget, env: NodeJS.ProcessEnv = process.env, me = commandName()): string {
  const words = [me, 'sync'];
  if (ctx.global.config) words.push('--config', shellWord(ctx.global.config));
  if (!server) return words.join(' ');
  const creds = credentialsCandidates(plainContext(ctx)).find((f) => existsSync(f));
  const envKey = env['SCHEMASYNC_API_KEY'] !== undefined && env['SCHEMASYNC_API_KEY'] !== '';
  let data: string | undefined;
  if (envKey || creds === undefined || resolve(creds) !== resolve(server.credentialsPath)) {
    data = relative(ctx.cwd, server.dataDir) || '.';
  }
  // With --data, that folder's credentials give the base URL too (below env and schemasync.yaml).
  const reach = usualInstance(ctx, env, data);
  if (!sameUrl(reach.baseUrl, server.baseUrl)) words.push('--base-url', shellWord(server.baseUrl));
  if (data !== undefined) words.push('--data', shellWord(data));
  return words.join(' ');
}

/**
 * What a plain command (`sync`, `plan`, `records` …) run here would talk to, and why
 * (dev warns when that is not its server). `data` is a `--data` the command would carry.
 */
export function usualInstance(ctx: InstanceContext, env: NodeJS.ProcessEnv = process.env, data?: string): { baseUrl: string | undefined; from: string } {
  try {
    const plain = plainContext(ctx);
    const inst = resolveInstance(data !== undefined ? { ...plain, options: { data } } : plain, env);
    const from = {
      flag: '--base-url', env: 'SCHEMASYNC_BASE_URL', config: "schemasync.yaml's baseUrl", credentials: 'the credentials file found', target: `target "${inst.target?.name ?? ''}"`,
    }[inst.from];
    return { baseUrl: inst.baseUrl, from };
  } catch {
    return { baseUrl: undefined, from: 'nothing' };
  }
}

/** The context without instance flags or options (dev's `--data` is its server's folder, not a lookup). */
function plainContext(ctx: InstanceContext): InstanceContext {
  return { cwd: ctx.cwd, global: { color: ctx.global.color, ...(ctx.global.config !== undefined ? { config: ctx.global.config } : {}) } };
}

function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export const debugEnabled = (): boolean => Boolean(process.env['SCHEMASYNC_DEBUG']);

/** Resolves on the first SIGINT/SIGTERM and removes its handlers. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolvePromise) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolvePromise(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export async function runWatch(ctx: CommandContext<unknown>, options: WatchRunOptions): Promise<number> {
  const stopSignal = options.stopSignal ?? untilSignal();
  const debug = debugEnabled();
  let firstRunDone = false;
  const render = makeRenderer(ctx, debug, options.quiet === true);
  const loop = startWatchLoop({
    configPath: options.configPath,
    debounceMs: options.debounceMs,
    allowDestructive: options.allowDestructive,
    syncCommand: options.syncCommand,
    ...(options.ignoredPaths ? { ignoredPaths: options.ignoredPaths } : {}),
    load: () => loadForWatch(options.configPath),
    push: options.push,
    emit: (event) => {
      render(event);
      if (event.type === 'run-end' && !firstRunDone) {
        firstRunDone = true;
        options.onFirstRun?.();
      }
    },
  });
  await loop.ready;
  const c = ctx.colors;
  const signal = await stopSignal;
  ctx.stdout.write(`\n${c.dim(stamp())} ${signal}: stopping\n`);
  await loop.close();
  return 0;
}

/**
 * The push the loop calls, through the SDK like every other command. No SDK retries: the
 * loop has its own backoff for an unreachable server, and a refusal must come back at
 * once (SCHEMA_DESTRUCTIVE_NOT_ALLOWED is a 500 the SDK would otherwise retry).
 */
export function sdkPush(baseUrl: string, apiKey: string | undefined | (() => string | undefined)): WatchRunOptions['push'] {
  const keyNow = typeof apiKey === 'function' ? apiKey : () => apiKey;
  let current: { key: string | undefined; client: SchemaClient } | undefined;
  const clientFor = (key: string | undefined) => {
    if (!current || current.key !== key) current = { key, client: new SchemaClient({ baseUrl, apiKey: key, retries: 0, timeoutMs: 15_000, fetch: nodeFetch }) };
    return current.client;
  };
  return async (source, declaration, call) => {
    const send = (key: string | undefined) =>
      clientFor(key).sources.push(source, declaration, { dryRun: call.dryRun, allowDestructive: call.allowDestructive });
    // The key is asked for on every push (liveApiKey re-reads credentials.json).
    const key = keyNow();
    try {
      return await send(key);
    } catch (err) {
      const status = (err as { status?: unknown }).status;
      if (status !== 401 && status !== 403) throw err;
      // A local server starting up listens a moment before it writes credentials.json:
      // a key that appeared or changed meanwhile gets one more try at once…
      const fresh = keyNow();
      if (fresh !== undefined && fresh !== key) return send(fresh);
      // …and no key at all yet is waiting, not a refusal: status 0 makes the loop retry.
      if (fresh === undefined) {
        throw Object.assign(new Error(`no API key yet for ${baseUrl} (no credentials.json, --api-key or SCHEMASYNC_API_KEY)`), { status: 0 });
      }
      throw err;
    }
  };
}

// --- loading -------------------------------------------------------------------------

export async function loadForWatch(configPath: string): Promise<LoadOutcome> {
  const loaded = await loadProject({ configPath });
  const out: LoadOutcome = {
    diagnostics: loaded.diagnostics.map((d): LoopDiagnostic => {
      const x: LoopDiagnostic = { severity: d.severity, message: d.message };
      if (d.code !== undefined) x.code = d.code;
      if (d.suggestion !== undefined) x.suggestion = d.suggestion;
      if (d.fix !== undefined) x.fix = d.fix;
      if (d.file !== undefined) x.file = d.file;
      if (d.line !== undefined) x.line = d.line;
      if (d.column !== undefined) x.column = d.column;
      return x;
    }),
  };
  if (loaded.config?.source !== undefined) out.source = loaded.config.source;
  if (loaded.config?.schema !== undefined) out.schema = loaded.config.schema;
  if (loaded.declaration !== undefined) out.declaration = loaded.declaration;
  return out;
}

// --- rendering -----------------------------------------------------------------------

const stamp = () => new Date().toTimeString().slice(0, 8);

const NOUN: Record<StepAction, { sign: '+' | '~' | '-'; noun: string }> = {
  create_object: { sign: '+', noun: 'object' },
  add_attribute: { sign: '+', noun: 'attribute' },
  create_view: { sign: '+', noun: 'view' },
  rename_object: { sign: '~', noun: 'rename' },
  rename_attribute: { sign: '~', noun: 'rename' },
  change_object: { sign: '~', noun: 'change' },
  change_attribute: { sign: '~', noun: 'change' },
  change_view: { sign: '~', noun: 'change' },
  drop_object: { sign: '-', noun: 'object' },
  drop_attribute: { sign: '-', noun: 'attribute' },
  drop_view: { sign: '-', noun: 'view' },
  create_role: { sign: '+', noun: 'role' },
  change_role: { sign: '~', noun: 'change' },
  rename_role: { sign: '~', noun: 'rename' },
  drop_role: { sign: '-', noun: 'role' },
};

/** `+1 attribute ~1 change` (issue 6: what changed, in one line). */
export function summarizeSteps(steps: readonly Step[]): string {
  const counts = new Map<string, number>();
  for (const s of steps) {
    const n = NOUN[s.action];
    const key = `${n.sign}${n.noun}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const order = '+~-';
  return [...counts]
    .sort((a, b) => order.indexOf(a[0][0]!) - order.indexOf(b[0][0]!))
    .map(([key, n]) => `${key[0]}${n} ${key.slice(1)}${n === 1 ? '' : 's'}`)
    .join(' ');
}

export function formatDiagnostic(cwd: string, d: LoopDiagnostic): string {
  const where = d.file ? `${relative(cwd, resolve(cwd, d.file)) || d.file}${d.line ? `:${d.line}${d.column ? `:${d.column}` : ''}` : ''} ` : '';
  // The same line `schemasync validate` prints, so editors' problem matchers read both.
  return `${where}${d.severity}${d.code ? ` ${d.code}` : ''} ${withSuggestion(d)}${d.fix ? ` — ${d.fix}` : ''}`;
}

function makeRenderer(ctx: CommandContext<unknown>, debug: boolean, quiet: boolean) {
  const c = ctx.colors;
  const out = (line: string) => ctx.stdout.write(`${c.dim(stamp())} ${line}\n`);
  const raw = (line: string) => ctx.stdout.write(`         ${line}\n`);
  return (e: LoopEvent): void => {
    switch (e.type) {
      case 'run-start':
        if (debug) out(c.dim(`[run ${e.run}] sync started`));
        return;
      case 'run-end':
        if (debug) out(c.dim(`[run ${e.run}] sync finished: ${e.outcome}`));
        return;
      case 'watching': {
        const shown = e.paths.map((p) => relative(ctx.cwd, p) || p);
        out(`watching ${shown.join(', ')} (Ctrl-C to stop)`);
        return;
      }
      case 'changed':
        if (debug) out(c.dim(`${e.event.kind} ${relative(ctx.cwd, e.event.path)}`));
        return;
      case 'synced': {
        const targets = e.plan.steps.map((s) => s.target);
        const named = targets.length <= 4 ? ` ${c.dim(targets.join(', '))}` : '';
        out(`${c.green('✓')} synced ${e.source} v${e.version}: ${summarizeSteps(e.plan.steps)} (${e.ms} ms)${named}`);
        return;
      }
      case 'unchanged':
        if (quiet) return;
        out(`${c.dim('·')} ${e.source} v${e.version} is up to date (${e.ms} ms)`);
        return;
      case 'warnings':
        for (const d of e.diagnostics) raw(c.yellow(formatDiagnostic(ctx.cwd, d)));
        return;
      case 'invalid': {
        const n = e.diagnostics.length;
        out(`${c.red('✗')} not synced: ${n || 'an'} error${n === 1 ? '' : 's'} in the declaration (fix and save; still watching)`);
        for (const d of e.diagnostics) raw(formatDiagnostic(ctx.cwd, d));
        return;
      }
      case 'held': {
        const n = e.steps.length;
        out(`${c.yellow('!')} held back: ${n} destructive step${n === 1 ? '' : 's'} would lose data; nothing was applied`);
        for (const s of e.steps) {
          const affected = s.affected !== undefined ? ` (${s.affected} affected)` : '';
          raw(`${c.red('-')} ${s.target}: ${s.action.replace('_', ' ')}${affected}${s.reason ? ` — ${s.reason}` : ''}`);
        }
        raw(`to apply: ${c.bold(e.command)}`);
        // a typo in --allow-destructive is why a loss the user meant to approve is held back
        if (e.unknownAllowed.length > 0) {
          raw(`${c.yellow('note:')} --allow-destructive names ${e.unknownAllowed.map((u) => u.target).join(', ')}, which nothing declared or planned matches${didYouMean(e.unknownAllowed) ? `: ${didYouMean(e.unknownAllowed)}` : ''}`);
        }
        return;
      }
      case 'refused': {
        out(`${c.red('✗')} not synced: ${formatServiceErrorLine(e.failure.status, e.failure.code, e.failure.message).replace(/^Error: /, '')}`);
        for (const k of e.conflicts) raw(`${c.red('!')} ${k.target}: ${k.message}${k.fix ? ` — ${k.fix}` : ''}`);
        // The remedy the one-shot commands print (a key's role or scope, --no-rate-limit), so
        // a refusal in a long-running session is as actionable as one from `sync`.
        const hint = serviceHint(e.failure, { name: 'watch', args: [], ctx });
        if (hint) raw(`${c.dim('hint:')} ${hint}`);
        return;
      }
      case 'unreachable':
        if (e.first) out(`${c.yellow('…')} ${e.message}; retrying (every save also retries)`);
        else if (debug) out(c.dim(`still unreachable; next try in ${e.retryInMs} ms`));
        return;
      case 'reachable':
        out(`${c.green('✓')} server reachable again`);
        return;
      case 'error':
        out(`${c.red('✗')} ${e.message}`);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  };
}
