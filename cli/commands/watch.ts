import type { CommandRun } from '../context.js';
import { configPathOf, liveApiKey, resolveInstance } from '../instance.js';
import { refuseUnwatched } from '../target.js';
import { parseAllowDestructive, parseDebounce, runWatch, sdkPush, syncCommandFor } from '../watch-session.js';

/**
 * `schemasync watch` (contract.md §4, issue 6): validate, plan and push on every change of
 * the declaration files, against whatever instance the other commands use. Never
 * destructive unless `--allow-destructive`; survives bad files and a stopped server.
 */
export interface WatchOptions {
  allowDestructive?: string | boolean;
  debounce?: string;
}

export const run: CommandRun<WatchOptions> = async (ctx) => {
  const debounceMs = parseDebounce(ctx.options.debounce);
  const allowDestructive = parseAllowDestructive(ctx.options.allowDestructive);
  // No instance is exit 2 at once (contract.md §4); an instance that is down is retried.
  const instance = resolveInstance(ctx);
  if (instance.target) refuseUnwatched(instance.target, 'watch');
  return runWatch(ctx, {
    configPath: configPathOf(ctx),
    debounceMs,
    allowDestructive,
    // Without an explicit key, credentials.json is read on each push: the local server may
    // write it (its first start) or replace it after watch started.
    push: sdkPush(instance.baseUrl, liveApiKey(ctx)),
    syncCommand: syncCommandFor(ctx),
  });
};
