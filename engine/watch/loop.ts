import type { Declaration } from '../model/declaration.js';
import type { AllowDestructive, Conflict, Plan, Step } from '../plan/types.js';
import { allowDestructiveFlag, approvalTargets } from '../plan/approval.js';
import type { PushAnswer } from '../plan/push.js';
import { uncoveredDestructive, unknownAllowTargets, type UnknownTarget } from '../plan/policy.js';
import { createScheduler, type Clock, type Scheduler } from './scheduler.js';
import { startWatcher, watchTargets, type WatchEvent, type Watcher, type WatchTargets } from './watcher.js';

/**
 * The watch loop (issue 6, contract.md §4 `watch`): on each run load + validate the
 * project, push it, and say in one line what happened. It is written against small
 * injected functions (load, push) so it is unit-testable without a server; the CLI wires
 * loadProject and the SDK in.
 *
 * Safety: the push goes out with exactly the user's `allowDestructive` (false unless
 * `--allow-destructive`), so the server — which refuses any data loss the flag does not
 * cover (contract.md §3, SCHEMA_DESTRUCTIVE_NOT_ALLOWED) — is the one gate, and nothing is
 * planned twice on the common path. Only when a push is refused does the loop ask for a
 * dry run, to show the steps, their affected counts and the command that applies them
 * (the refusal itself is a masked 500 that carries no details).
 */

/** A problem in a declaration file, located (`schema/deal.yaml:7:15`). */
export interface LoopDiagnostic {
  severity: 'error' | 'warning';
  message: string;
  code?: string;
  file?: string;
  line?: number;
  column?: number;
  suggestion?: string;
  fix?: string;
}

export interface LoadOutcome {
  source?: string;
  /** The config's `schema` entry, to re-point the watcher when schemasync.yaml changes it. */
  schema?: string | string[];
  /** Present only when there are no errors. */
  declaration?: Declaration;
  diagnostics: LoopDiagnostic[];
}

export interface PushCall {
  dryRun: boolean;
  allowDestructive: AllowDestructive;
}

export type { PushAnswer };

/** The structural shape of the SDK's ServiceRequestError (contract.md §5). */
export interface PushFailure {
  status: number;
  code?: string;
  message: string;
}

export type LoopEvent =
  | { type: 'run-start'; run: number }
  | { type: 'run-end'; run: number; outcome: RunOutcome }
  | { type: 'synced'; run: number; source: string; version: number; plan: Plan; ms: number }
  | { type: 'unchanged'; run: number; source: string; version: number; ms: number }
  | { type: 'invalid'; run: number; diagnostics: LoopDiagnostic[]; ms: number }
  | { type: 'warnings'; run: number; diagnostics: LoopDiagnostic[] }
  | { type: 'held'; run: number; source: string; steps: Step[]; command: string; ms: number; unknownAllowed: UnknownTarget[] }
  | { type: 'refused'; run: number; failure: PushFailure; conflicts: Conflict[]; ms: number }
  | { type: 'unreachable'; run: number; message: string; retryInMs: number; first: boolean }
  | { type: 'reachable'; run: number }
  | { type: 'changed'; event: WatchEvent }
  | { type: 'watching'; paths: string[] }
  | { type: 'error'; run: number; message: string };

export type RunOutcome = 'synced' | 'unchanged' | 'invalid' | 'held' | 'refused' | 'unreachable' | 'error';

export interface LoopDeps {
  load(): Promise<LoadOutcome>;
  push(source: string, declaration: Declaration, call: PushCall): Promise<PushAnswer>;
  emit(event: LoopEvent): void;
  allowDestructive?: AllowDestructive;
  /**
   * What the user runs to apply held-back steps, without the flag (`schemasync sync`).
   * A function is asked at the moment of holding back, so it reflects the config as it is
   * then (dev adds `--base-url`/`--data` only when `sync` would not find its server).
   */
  syncCommand?: string | (() => string);
  clock?: Clock;
}

const RETRY_DELAYS_MS = [500, 1000, 2000, 4000, 8000];

export function isPushFailure(err: unknown): err is PushFailure {
  const e = err as Partial<PushFailure> | null;
  return typeof e === 'object' && e !== null && typeof e.status === 'number' && typeof e.message === 'string';
}

/** One run: load → push → one event saying what happened. Never throws for expected failures. */
export function createRunner(deps: LoopDeps) {
  const allow = deps.allowDestructive ?? false;
  const now = () => (deps.clock ?? { now: () => performance.now() }).now();
  let runs = 0;
  let outage = 0;
  return {
    get outage() {
      return outage;
    },
    async runOnce(): Promise<{ outcome: RunOutcome; retryInMs?: number }> {
      const run = ++runs;
      deps.emit({ type: 'run-start', run });
      const t0 = now();
      const ms = () => Math.round(now() - t0);
      const done = (outcome: RunOutcome, retryInMs?: number) => {
        deps.emit({ type: 'run-end', run, outcome });
        return retryInMs === undefined ? { outcome } : { outcome, retryInMs };
      };
      let loaded: LoadOutcome;
      try {
        loaded = await deps.load();
      } catch (err) {
        deps.emit({ type: 'error', run, message: err instanceof Error ? err.message : String(err) });
        return done('error');
      }
      const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
      if (errors.length || !loaded.declaration || !loaded.source) {
        deps.emit({ type: 'invalid', run, diagnostics: errors, ms: ms() });
        return done('invalid');
      }
      const warnings = loaded.diagnostics.filter((d) => d.severity === 'warning');
      if (warnings.length) deps.emit({ type: 'warnings', run, diagnostics: warnings });
      const { source, declaration } = loaded;
      try {
        const answer = await deps.push(source, declaration, { dryRun: false, allowDestructive: allow });
        if (outage) deps.emit({ type: 'reachable', run });
        outage = 0;
        if (answer.plan.steps.length === 0) {
          deps.emit({ type: 'unchanged', run, source, version: answer.version, ms: ms() });
          return done('unchanged');
        }
        deps.emit({ type: 'synced', run, source, version: answer.version, plan: answer.plan, ms: ms() });
        return done('synced');
      } catch (err) {
        if (!isPushFailure(err)) {
          deps.emit({ type: 'error', run, message: err instanceof Error ? err.message : String(err) });
          return done('error');
        }
        if (err.status === 0) {
          // SDK contract (§5): status 0 is a refused connection or a timeout — retry, not fatal.
          const retryInMs = RETRY_DELAYS_MS[Math.min(outage, RETRY_DELAYS_MS.length - 1)] ?? 8000;
          deps.emit({ type: 'unreachable', run, message: err.message, retryInMs, first: outage === 0 });
          outage++;
          return done('unreachable', retryInMs);
        }
        if (outage) deps.emit({ type: 'reachable', run });
        outage = 0;
        // The refusal says only its code; a dry run gives every step and conflict (§3).
        let plan: Plan | undefined;
        try {
          plan = (await deps.push(source, declaration, { dryRun: true, allowDestructive: allow })).plan;
        } catch {
          plan = undefined;
        }
        if (err.code === 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED' && plan && plan.conflicts.length === 0) {
          const held = uncoveredDestructive(plan, allow);
          const base = typeof deps.syncCommand === 'function' ? deps.syncCommand() : (deps.syncCommand ?? 'schemasync sync');
          const command = `${base} ${allowDestructiveFlag(approvalTargets(plan))}`;
          deps.emit({ type: 'held', run, source, steps: held, command, ms: ms(), unknownAllowed: unknownAllowTargets(allow, declaration, plan) });
          return done('held');
        }
        deps.emit({ type: 'refused', run, failure: err, conflicts: plan?.conflicts ?? [], ms: ms() });
        return done('refused');
      }
    },
  };
}

export interface WatchLoopOptions extends LoopDeps {
  configPath: string;
  debounceMs: number;
  /** Start with one sync before any file changes (what `watch` and `dev` do). */
  initialRun?: boolean;
  /** Folders never watched (dev's data folder, where its server writes SQLite). */
  ignoredPaths?: string[];
}

export interface WatchLoop {
  ready: Promise<void>;
  scheduler: Scheduler;
  /** Stops watching, cancels a pending run and waits for the one in flight. */
  close(): Promise<void>;
}

export function startWatchLoop(options: WatchLoopOptions): WatchLoop {
  const clock = options.clock;
  let targets: WatchTargets = watchTargets(options.configPath, undefined);
  let watcher: Watcher | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const runner = createRunner({
    ...options,
    load: async () => {
      const loaded = await options.load();
      // schemasync.yaml may have changed what `schema` names: follow it.
      if (loaded.schema !== undefined && watcher) {
        const next = watchTargets(options.configPath, loaded.schema);
        if (next.paths.join('\0') !== targets.paths.join('\0')) {
          targets = next;
          watcher.setTargets(next);
        }
      }
      return loaded;
    },
  });

  const scheduler = createScheduler({
    debounceMs: options.debounceMs,
    ...(clock ? { clock } : {}),
    run: async () => {
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = undefined;
      const { retryInMs } = await runner.runOnce();
      if (retryInMs !== undefined && !closed) {
        retryTimer = setTimeout(() => scheduler.runNow(), retryInMs);
      }
    },
    onError: (err) => options.emit({ type: 'error', run: 0, message: err instanceof Error ? err.message : String(err) }),
  });

  const ready = (async () => {
    // Learn the schema folder/globs before watching, so the first event is not missed.
    try {
      const loaded = await options.load();
      if (loaded.schema !== undefined) targets = watchTargets(options.configPath, loaded.schema);
    } catch {
      // Reported by the first run.
    }
    watcher = startWatcher({
      targets,
      ...(options.ignoredPaths ? { ignoredPaths: options.ignoredPaths } : {}),
      onEvent: (event) => {
        options.emit({ type: 'changed', event });
        scheduler.schedule();
      },
      onError: (err) => options.emit({ type: 'error', run: 0, message: `watcher: ${err instanceof Error ? err.message : String(err)}` }),
    });
    await watcher.ready;
    options.emit({ type: 'watching', paths: targets.paths });
    if (options.initialRun !== false) scheduler.runNow();
  })();

  return {
    ready,
    scheduler,
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      await ready.catch(() => undefined);
      await watcher?.close();
      await scheduler.close();
    },
  };
}
