import { MAX_PAGE } from '../../engine/model/limits.js';
import { stringify } from 'yaml';
import type { ViewDecl } from '../../engine/model/declaration.js';
import type { Filter, SortSpec } from '../../engine/model/filter.js';
import { ownerText } from '../../engine/model/stored.js';
import type { CommandRun } from '../context.js';
import { CliError } from '../errors.js';
import { valueDataClient } from '../instance.js';
import { limitOf } from '../options.js';
import { cell, renderTable } from '../render/table.js';

/**
 * `schemasync views list | get <name> | put <name> | delete <name> | run <name>`
 * (contract.md §4 "administration", §3 "Views"), over the SDK like every command. A view a
 * source owns is changed in its declaration; put/delete of one answer 409 SCHEMA_DUPLICATE.
 */
interface ViewsOptions {
  object?: string;
  filter?: string;
  sort?: string;
  columns?: string;
  label?: string;
  data?: string;
  limit?: string;
  all?: boolean;
}

function parseJson(flag: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new CliError(`${flag} is not valid JSON: ${(err as Error).message}`, { hint: `quote it for your shell, e.g. ${flag} '{"stage":{"in":["lead"]}}'` });
  }
}

/** `amount:desc,title` → [{ attribute: amount, direction: desc }, { attribute: title }]. */
export function parseSort(text: string): SortSpec[] {
  return text.split(',').map((part) => part.trim()).filter(Boolean).map((part) => {
    const [attribute, direction] = part.split(':');
    if (direction !== undefined && direction !== 'asc' && direction !== 'desc') {
      throw new CliError(`--sort ${part}: the direction must be asc or desc`);
    }
    return { attribute: attribute!, ...(direction ? { direction } : {}) };
  });
}

function viewBody(o: ViewsOptions): ViewDecl {
  const base = o.data !== undefined ? (parseJson('--data', o.data) as ViewDecl) : ({} as ViewDecl);
  if (typeof base !== 'object' || base === null || Array.isArray(base)) throw new CliError('--data must be a JSON object: {"object": "deal", …}');
  const view: ViewDecl = { ...base };
  if (o.object !== undefined) view.object = o.object;
  if (o.label !== undefined) view.label = o.label;
  if (o.filter !== undefined) view.filter = parseJson('--filter', o.filter) as Filter;
  if (o.sort !== undefined) view.sort = parseSort(o.sort);
  if (o.columns !== undefined) view.columns = o.columns.split(',').map((c) => c.trim()).filter(Boolean);
  if (!view.object) throw new CliError('views put needs the object it reads: --object <name> (or "object" in --data)');
  return view;
}

export const run: CommandRun<ViewsOptions> = async (ctx) => {
  const [action, name] = ctx.args;
  // Its --data is the view as JSON, not a data folder.
  const client = valueDataClient(ctx);
  const out = (s: string) => ctx.stdout.write(`${s}\n`);
  const needName = (): string => {
    if (!name) throw new CliError(`views ${action} needs a view name: schemasync views ${action} <name>`, { hint: 'schemasync views list shows them' });
    return name;
  };

  switch (action) {
    case 'list': {
      const views = await client.views.list();
      if (ctx.global.json || views.length === 0) {
        out(ctx.global.json ? JSON.stringify(views) : 'no views');
        return 0;
      }
      const rows = views.map((v) => [v.name, v.object, ownerText(v.owner), (v.columns ?? []).join(',') || '(all)']);
      for (const l of renderTable(['NAME', 'OBJECT', 'OWNER', 'COLUMNS'], rows, ctx.colors)) out(l);
      return 0;
    }
    case 'get': {
      const view = await client.views.get(needName());
      if (ctx.global.json) out(JSON.stringify(view));
      else ctx.stdout.write(stringify({ [view.name]: { ...view, name: undefined } }));
      return 0;
    }
    case 'put': {
      const view = await client.views.put(needName(), viewBody(ctx.options));
      if (ctx.global.json) out(JSON.stringify(view));
      else out(`saved view ${view.name} (${view.object}, runtime)`);
      return 0;
    }
    case 'delete': {
      await client.views.delete(needName());
      if (ctx.global.json) out(JSON.stringify({ name, deleted: true }));
      else out(`deleted view ${name}`);
      return 0;
    }
    case 'run': {
      const view = await client.views.get(needName());
      const limit = limitOf(ctx.options.limit, MAX_PAGE);
      const records = [];
      let cursor: string | undefined;
      do {
        const page = await client.views.run(view.name, { ...(limit !== undefined ? { limit } : {}), ...(cursor !== undefined ? { cursor } : {}) });
        // NDJSON as it arrives, so a large view streams instead of piling up in memory.
        if (ctx.global.json) for (const r of page.records) out(JSON.stringify(r));
        else records.push(...page.records);
        cursor = ctx.options.all ? page.nextCursor ?? undefined : undefined;
      } while (cursor !== undefined);
      if (ctx.global.json) return 0;
      const columns = view.columns ?? [...new Set(records.flatMap((r) => Object.keys(r.values)))];
      const rows = records.map((r) => [r.id, ...columns.map((c) => cell(r.values[c]))]);
      for (const l of renderTable(['ID', ...columns.map((c) => c.toUpperCase())], rows, ctx.colors)) out(l);
      return 0;
    }
    default:
      throw new CliError(`unknown views action "${action ?? ''}": use list, get, put, delete or run`);
  }
};
