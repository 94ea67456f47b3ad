import { MAX_PAGE } from '../../engine/model/limits.js';
import type { SourceHistoryEntry } from '../../engine/model/stored.js';
import type { CommandRun } from '../context.js';
import { connect } from '../instance.js';
import { limitOf } from '../options.js';
import { loadOrFail } from './plan-support.js';

interface HistoryOptions {
  format?: never;
  limit?: string;
  all?: boolean;
}

/**
 * `schemasync history` (contract.md §4): the source's pushes, newest first — version, when,
 * by which key, plan hash, step counts and the destructive targets approved. `--all`
 * follows the keyset cursor to the first push.
 */
export const run: CommandRun<HistoryOptions> = async (ctx) => {
  const limit = limitOf(ctx.options.limit, MAX_PAGE) ?? 20;
  const { client } = connect(ctx);
  const { source } = loadOrFail(ctx);
  const entries: SourceHistoryEntry[] = [];
  let cursor: string | null = null;
  do {
    const page: { entries: SourceHistoryEntry[]; nextCursor: string | null } = await client.sources.history(source, { limit, ...(cursor !== null ? { cursor } : {}) });
    entries.push(...page.entries);
    cursor = ctx.options.all === true ? page.nextCursor : null;
  } while (cursor !== null);
  if (ctx.global.json) {
    ctx.stdout.write(`${JSON.stringify({ source, entries }, null, 2)}\n`);
    return 0;
  }
  const c = ctx.colors;
  ctx.stdout.write(`${c.bold(`Pushes of ${source} on ${client.baseUrl}`)}\n`);
  if (entries.length === 0) ctx.stdout.write('  (none yet)\n');
  for (const e of entries) {
    const by = e.key ? `${e.key.name} (${e.key.id})` : '(unknown key)';
    const lost = e.destructive.length > 0 ? c.red(` destructive: ${e.destructive.join(', ')}`) : '';
    ctx.stdout.write(`  v${e.version}  ${e.appliedAt}  ${by}  plan ${e.planHash.slice(0, 12)}  +${e.steps.create} ~${e.steps.change} -${e.steps.drop}${lost}\n`);
  }
  return 0;
};
