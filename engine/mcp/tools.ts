import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Declaration } from '../model/declaration.js';
import type { Filter, SortSpec } from '../model/filter.js';
import type { RecordOut, StoredObject } from '../model/stored.js';
import type { SchemaClient } from '../sdk/index.js';
import type { Action } from '../server/permissions.js';
import { dataResult, describeObject, errorResult, objectSummary, recordsPayload } from './format.js';
import { planPayload } from './plan.js';
import type { ToolName } from './schemas.js';

/**
 * The tools of contract.md §6. Each says what the key must be allowed (`needs`, an action
 * of engine/server/permissions.ts, the rule the routes enforce), whether it writes (then
 * it is offered only when writes are enabled), and annotations that are true of it:
 * reads are read-only and idempotent; create adds a record (not idempotent); update and
 * delete are destructive (an overwritten or deleted value is gone) and idempotent (the
 * required version, resp. the id, makes a repeat a refusal, not a second change).
 * `plan_sync` is read-only: a dry run that applies nothing (no tool changes the schema).
 */
export type Args = Record<string, unknown>;

/** The declaration plan_sync plans when it is given none: the project's files (stdio only). */
export type ProjectLoader = () => Promise<{ source: string; declaration: Declaration }>;

export interface ToolContext {
  client: SchemaClient;
  /** Whether the key may do this (its actions from GET /keys/self). */
  may(action: Action): boolean;
  project?: ProjectLoader | undefined;
}

export interface ToolDef {
  name: ToolName;
  title: string;
  description: string;
  needs: Action;
  write: boolean;
  annotations: ToolAnnotations;
  /** "<action> <object>" for `Access denied: cannot <action> <object>` (contract.md §6). */
  refused(args: Args): string;
  run(ctx: ToolContext, args: Args): Promise<CallToolResult>;
}

const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const str = (v: unknown): string => (typeof v === 'string' ? v : String(v));
/** A name as it may appear in a sentence: bare when it is a plain name, else JSON-quoted. */
const named = (v: unknown): string => (typeof v === 'string' && /^[A-Za-z0-9_.:-]{1,200}$/.test(v) ? v : JSON.stringify(v));

/** The object's schema for the legend, when the key may read it (else records go without). */
async function schemaFor(ctx: ToolContext, object: string): Promise<StoredObject | undefined> {
  if (!ctx.may('schema:read')) return undefined;
  try {
    return await ctx.client.schema.getObject(object);
  } catch {
    return undefined; // the records call answers for a missing object
  }
}

async function recordsWithLegend(
  ctx: ToolContext,
  object: string,
  load: () => Promise<{ records: RecordOut[]; nextCursor?: string | null; total?: number }>,
): Promise<Record<string, unknown>> {
  const [page, schema] = await Promise.all([load(), schemaFor(ctx, object)]);
  const meta = page.nextCursor === undefined ? undefined : { nextCursor: page.nextCursor, ...(page.total !== undefined ? { total: page.total } : {}) };
  return recordsPayload(object, page.records, schema, meta);
}

const TOOLS: readonly ToolDef[] = [
  {
    name: 'list_objects',
    title: 'List objects and views',
    description: 'Lists the objects (record types) with their attributes and types, and the views. Start here.',
    needs: 'schema:read',
    write: false,
    annotations: READ,
    refused: () => 'list objects',
    async run({ client }) {
      const [objects, views] = await Promise.all([client.schema.listObjects(), client.views.list()]);
      return dataResult(`${objects.length} objects and ${views.length} views.`, {
        objects: objects.map(objectSummary),
        views: views.map((v) => ({ name: v.name, object: v.object, ...(v.label !== undefined ? { label: v.label } : {}), ...(v.description !== undefined ? { description: v.description } : {}) })),
      });
    },
  },
  {
    name: 'describe_object',
    title: 'Describe an object',
    description: "One object's attributes with their types, labels, constraints (required, unique, min/max, lengths, pattern) and options.",
    needs: 'schema:read',
    write: false,
    annotations: READ,
    refused: (a) => `describe object ${named(a['object'])}`,
    async run({ client }, a) {
      const o = await client.schema.getObject(str(a['object']));
      return dataResult(`Object ${o.name}: ${o.attributes.length} attributes.`, describeObject(o));
    },
  },
  {
    name: 'search_records',
    title: 'Search records of an object',
    description:
      'Records of one object matching a filter ({ attr: value } or { attr: { op: value } }, ops eq ne gt gte lt lte in nin contains startsWith isNull; and/or/not), sorted, one page at a time (pass nextCursor back as cursor).',
    needs: 'records:read',
    write: false,
    annotations: READ,
    refused: (a) => `read ${named(a['object'])} records`,
    async run(ctx, a) {
      const object = str(a['object']);
      const options: { filter?: Filter; sort?: SortSpec[]; limit?: number; cursor?: string } = {};
      if (a['filter'] !== undefined) options.filter = a['filter'] as Filter;
      if (a['sort'] !== undefined) options.sort = a['sort'] as SortSpec[];
      if (a['limit'] !== undefined) options.limit = a['limit'] as number;
      if (a['cursor'] !== undefined) options.cursor = a['cursor'] as string;
      const payload = await recordsWithLegend(ctx, object, () => ctx.client.records(object).search(options));
      return dataResult(`${(payload['records'] as unknown[]).length} ${object} records.`, payload);
    },
  },
  {
    name: 'get_record',
    title: 'Get a record',
    description: 'One record by id, with its version (pass it to update_record).',
    needs: 'records:read',
    write: false,
    annotations: READ,
    refused: (a) => `read ${named(a['object'])} record ${named(a['id'])}`,
    async run(ctx, a) {
      const object = str(a['object']);
      const payload = await recordsWithLegend(ctx, object, async () => ({ records: [await ctx.client.records(object).get(str(a['id']))] }));
      return dataResult(`The ${object} record ${str(a['id'])}.`, payload);
    },
  },
  {
    name: 'search',
    title: 'Search across objects',
    description: 'Full-text search over the text-like attributes of every object the key may read (or of the named objects), best first.',
    needs: 'search',
    write: false,
    annotations: READ,
    refused: () => 'search records',
    async run({ client }, a) {
      const hits = await client.search({
        query: str(a['query']),
        ...(a['objects'] !== undefined ? { objects: a['objects'] as string[] } : {}),
        ...(a['limit'] !== undefined ? { limit: a['limit'] as number } : {}),
      });
      return dataResult(`${hits.length} hits.`, { hits });
    },
  },
  {
    name: 'run_view',
    title: 'Run a view',
    description: "The records of a saved view (its filter, sort and columns), one page at a time.",
    needs: 'records:read',
    write: false,
    annotations: READ,
    refused: (a) => `run view ${named(a['view'])}`,
    async run(ctx, a) {
      const view = str(a['view']);
      const page = await ctx.client.views.run(view, {
        ...(a['limit'] !== undefined ? { limit: a['limit'] as number } : {}),
        ...(a['cursor'] !== undefined ? { cursor: a['cursor'] as string } : {}),
      });
      const object = page.records[0]?.object ?? (ctx.may('schema:read') ? (await ctx.client.views.get(view)).object : '');
      const schema = object ? await schemaFor(ctx, object) : undefined;
      return dataResult(`${page.records.length} records of view ${view}.`, { view, ...recordsPayload(object, page.records, schema, page) });
    },
  },
  {
    name: 'create_record',
    title: 'Create a record',
    description: 'Creates one record from attribute name → value (see describe_object for types and constraints).',
    needs: 'records:write',
    write: true,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    refused: (a) => `create ${named(a['object'])} records`,
    async run(ctx, a) {
      const object = str(a['object']);
      const payload = await recordsWithLegend(ctx, object, async () => ({ records: [await ctx.client.records(object).create(a['values'] as Args)] }));
      return dataResult(`Created a ${object} record.`, payload);
    },
  },
  {
    name: 'update_record',
    title: 'Update a record',
    description:
      'Changes the given attributes of one record. Needs the version you read: if someone changed the record since, the update is refused; read it again and decide.',
    needs: 'records:write',
    write: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    refused: (a) => `update ${named(a['object'])} record ${named(a['id'])}`,
    async run(ctx, a) {
      // Two agents updating one record with the version they both read: the server compares
      // `if-match` inside its write transaction (writes are serialised there), so exactly one
      // lands and the other gets the 409 — never a lost update. Nothing is cached here.
      const object = str(a['object']);
      const update = () => ctx.client.records(object).update(str(a['id']), a['values'] as Args, { ifMatch: a['version'] as number });
      const payload = await recordsWithLegend(ctx, object, async () => ({ records: [await update()] }));
      return dataResult(`Updated the ${object} record ${str(a['id'])}.`, payload);
    },
  },
  {
    name: 'delete_record',
    title: 'Delete a record',
    description: 'Deletes one record for good.',
    needs: 'records:write',
    write: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    refused: (a) => `delete ${named(a['object'])} record ${named(a['id'])}`,
    async run({ client }, a) {
      const { id } = await client.records(str(a['object'])).delete(str(a['id']));
      return dataResult(`Deleted the ${str(a['object'])} record ${id}.`, { object: str(a['object']), deleted: id });
    },
  },
  {
    name: 'plan_sync',
    title: 'Plan a schema sync (dry run)',
    description:
      "Shows what syncing a declaration would change: steps, destructive steps with the data they lose, conflicts with sample record ids and fixes, and the plan hash. A dry run: it never changes the schema. Applying is for people (schemasync sync --plan, or CI).",
    needs: 'schema:read',
    write: false,
    annotations: READ,
    refused: (a) => (a['source'] === undefined ? 'plan the project\'s source' : `plan source ${named(a['source'])}`),
    async run({ client, project }, a) {
      let source = a['source'] as string | undefined;
      let declaration = a['declaration'] as Declaration | undefined;
      if (source === undefined || declaration === undefined) {
        if (!project) return errorResult('plan_sync here needs both `source` and `declaration`: this server has no project files to read them from.');
        const loaded = await project();
        source ??= loaded.source;
        declaration ??= loaded.declaration;
        // A refusal names the source planned (args is this call's own copy).
        a['source'] = source;
      }
      // dryRun: the store plans inside a transaction it never applies (contract.md §3).
      const answer = await client.sources.push(source, { ...declaration, objects: declaration.objects ?? {}, views: declaration.views ?? {} }, { dryRun: true });
      return dataResult(`Plan for source ${source} (dry run: nothing was applied).`, planPayload(source, answer));
    },
  },
];

export const TOOL_LIST: readonly ToolDef[] = TOOLS;
export const TOOLS_BY_NAME: ReadonlyMap<string, ToolDef> = new Map(TOOLS.map((t) => [t.name, t]));
