import { DEFAULT_PAGE, MAX_PAGE } from '../../engine/model/limits.js';
import type { RecordOut } from '../../engine/model/stored.js';
import type { CommandRun } from '../context.js';
import { CliError } from '../errors.js';
import { limitOf } from '../options.js';
import { clientOf, shapeOf, type RecordsContext, type RecordsOptions } from '../records/context.js';
import type { SchemaClient } from '../../engine/sdk/index.js';
import { whileThrottled } from '../records/throttle.js';
import { parseFilter, parseSort } from '../records/query.js';
import { recordTable } from '../render/records.js';

const USAGE = 'schemasync records list|get|create|update|delete|import|export <object> …';

/**
 * `schemasync records <action> <object>` (contract.md §4, issue 17): thin over the SDK.
 * list/get/create/update/delete live here; import and export, which stream files, in
 * records-import.ts and records-export.ts.
 */
export const run: CommandRun<RecordsOptions> = async (ctx) => {
  const [action, object, ...rest] = ctx.args;
  if (!object) throw new CliError(`Missing the object name. Usage: ${USAGE}`);
  switch (action) {
    case 'list':
      return list(ctx, object);
    case 'get':
      return get(ctx, object, need(rest[0], 'get needs a record id: schemasync records get <object> <id>'));
    case 'create':
      return create(ctx, object);
    case 'update':
      return update(ctx, object, need(rest[0], 'update needs a record id: schemasync records update <object> <id> --set attr=value'));
    case 'delete':
      return remove(ctx, object, need(rest[0], 'delete needs a record id: schemasync records delete <object> <id>'));
    case 'import':
      return (await import('./records-import.js')).importRecords(ctx, object, need(rest[0], 'import needs a file (or - for stdin): schemasync records import <object> <file|->'));
    case 'export':
      return (await import('./records-export.js')).exportRecords(ctx, object);
    default:
      throw new CliError(`Unknown records action '${action ?? ''}'. Usage: ${USAGE}`);
  }
};

function need(value: string | undefined, message: string): string {
  if (!value) throw new CliError(message);
  return value;
}

async function list(ctx: RecordsContext, object: string): Promise<number> {
  const client = clientOf(ctx);
  const filter = parseFilter(ctx.options.filter);
  const sort = parseSort(ctx.options.sort);
  const all = ctx.options.all === true;
  const limit = limitOf(ctx.options.limit, all ? Number.MAX_SAFE_INTEGER : MAX_PAGE) ?? (all ? undefined : DEFAULT_PAGE);
  const json = ctx.global.json === true;
  const table = json ? undefined : recordTable(ctx.stdout, await shapeOf(client, object), ctx.colors);
  let cursor = ctx.options.cursor;
  let shown = 0;
  const say = (s: string) => ctx.stderr.write(`${s}\n`);
  for (;;) {
    const want = limit === undefined ? MAX_PAGE : Math.min(MAX_PAGE, limit - shown);
    const page = await whileThrottled(
      () => client.records(object).search({ ...(filter ? { filter } : {}), ...(sort ? { sort } : {}), limit: want, ...(cursor ? { cursor } : {}) }),
      (secs) => say(`rate limit reached (429 Too Many Requests): waiting ${secs} s before reading the next page`),
    );
    // NDJSON: one record a line, written as each page arrives, so `--all` streams.
    if (json) ctx.stdout.write(page.records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    else table!.rows(page.records);
    shown += page.records.length;
    cursor = page.nextCursor ?? undefined;
    if (!cursor || !all || (limit !== undefined && shown >= limit)) break;
  }
  if (!json) table!.end(shown);
  if (cursor && !all) say(`more records: --all for every page, or --cursor ${cursor} for the next`);
  return 0;
}

function printRecord(ctx: RecordsContext, record: RecordOut, headline: string): void {
  if (ctx.global.json) {
    ctx.stdout.write(`${JSON.stringify(record, null, 2)}\n`);
    return;
  }
  const c = ctx.colors;
  const lines = [headline, `  ${c.dim('version')}    ${record.version}`, `  ${c.dim('createdAt')}  ${record.createdAt}`, `  ${c.dim('updatedAt')}  ${record.updatedAt}`];
  const width = Math.max(0, ...Object.keys(record.values).map((k) => k.length));
  for (const [k, v] of Object.entries(record.values)) lines.push(`  ${k.padEnd(width)}  ${v === null ? c.dim('-') : typeof v === 'string' ? v : JSON.stringify(v)}`);
  ctx.stdout.write(`${lines.join('\n')}\n`);
}

async function get(ctx: RecordsContext, object: string, id: string): Promise<number> {
  const record = await clientOf(ctx).records(object).get(id);
  printRecord(ctx, record, `${object} ${record.id}`);
  return 0;
}

/**
 * `--data '<json>'` and/or `--set attr=value` (later wins): `--set` values are typed by the
 * attribute through the registry's cell rules (engine/model/types/cells.ts), the same
 * conversion a CSV import applies; an empty value is null.
 */
async function valuesOf(ctx: RecordsContext, client: SchemaClient, object: string): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  if (ctx.options.data !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(ctx.options.data);
    } catch (err) {
      throw new CliError(`--data is not JSON: ${(err as Error).message}`, { hint: `e.g. --data '{"title":"Renewal","amount":5000}'` });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new CliError('--data must be a JSON object of attribute → value');
    // defineProperty: a `__proto__` key stays an ordinary key (the server refuses it as unknown).
    for (const [k, v] of Object.entries(parsed)) Object.defineProperty(values, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  const sets = ctx.options.set ?? [];
  if (sets.length > 0) {
    const shape = await shapeOf(client, object);
    const problems: string[] = [];
    for (const item of sets) {
      const eq = item.indexOf('=');
      if (eq <= 0) {
        problems.push(`--set ${item}: expected attr=value`);
        continue;
      }
      const name = item.slice(0, eq);
      const v = shape.fromCell(name, eq === item.length - 1 ? null : item.slice(eq + 1));
      if (v.ok) Object.defineProperty(values, name, { value: v.value, enumerable: true, writable: true, configurable: true });
      else problems.push(`--set ${name}: ${v.message}`);
    }
    if (problems.length > 0) throw new CliError(problems.join('; '), { hint: `attributes of ${object}: ${shape.attributes.map((a) => `${a.name} (${a.type})`).join(', ')}` });
  }
  if (Object.keys(values).length === 0 && ctx.options.data === undefined) throw new CliError('Nothing to write: pass --data \'<json>\' or --set attr=value');
  return values;
}

async function create(ctx: RecordsContext, object: string): Promise<number> {
  const client = clientOf(ctx);
  const record = await client.records(object).create(await valuesOf(ctx, client, object));
  printRecord(ctx, record, `created ${object} ${record.id}`);
  return 0;
}

/**
 * `update` is always conditional (contract.md §3: PUT needs if-match): `--if-match <version>`
 * (or `*`), or `--read-first`, which reads the record and sends the version it read — a
 * write in between is then refused with 409 SCHEMA_CONFLICT rather than overwritten.
 */
async function update(ctx: RecordsContext, object: string, id: string): Promise<number> {
  const client = clientOf(ctx);
  const values = await valuesOf(ctx, client, object);
  let ifMatch: number | '*';
  if (ctx.options.ifMatch !== undefined && ctx.options.readFirst) throw new CliError('Pass --if-match or --read-first, not both');
  if (ctx.options.ifMatch !== undefined) {
    const raw = ctx.options.ifMatch.replace(/^"(.*)"$/, '$1');
    if (raw !== '*' && !/^\d+$/.test(raw)) throw new CliError(`--if-match takes a record version (a whole number) or *, got '${ctx.options.ifMatch}'`);
    ifMatch = raw === '*' ? '*' : Number(raw);
  } else if (ctx.options.readFirst) {
    ifMatch = (await client.records(object).get(id)).version;
  } else {
    throw new CliError('update needs the version it changes: --if-match <version> (see `records get`), --read-first, or --if-match "*" to overwrite whatever is stored');
  }
  let record: RecordOut;
  try {
    record = await client.records(object).update(id, values, { ifMatch });
  } catch (err) {
    const e = err as { status?: number; hint?: string };
    if (e.status === 409) e.hint = `the record changed since that version: read it again (schemasync records get ${object} ${id}) and retry, or use --read-first`;
    throw err;
  }
  printRecord(ctx, record, `updated ${object} ${record.id}`);
  return 0;
}

async function remove(ctx: RecordsContext, object: string, id: string): Promise<number> {
  const out = await clientOf(ctx).records(object).delete(id);
  if (ctx.global.json) ctx.stdout.write(`${JSON.stringify(out)}\n`);
  else ctx.stdout.write(`deleted ${object} ${out.id}\n`);
  return 0;
}
