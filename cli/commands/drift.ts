import { compareDrift } from '../../engine/plan/drift.js';
import type { Declaration } from '../../engine/model/declaration.js';
import { ServiceRequestError } from '../../engine/sdk/index.js';
import type { CommandRun } from '../context.js';
import { connect } from '../instance.js';
import { renderDriftMarkdown, renderDriftText } from '../render/drift.js';
import { loadOrFail } from './plan-support.js';
import { storedDeclaration } from './pull.js';

interface DriftOptions {
  format?: 'text' | 'json' | 'markdown';
  detailedExitcode?: boolean;
}

/**
 * `schemasync drift` (contract.md §4): the last applied declaration (GET
 * /schema/sources/:id), what the instance holds (its schema) and the files, compared by the
 * pure engine/plan/drift.ts. With --detailed-exitcode: 0 no drift, 2 drift, 1 an error —
 * so a nightly job fails loudly only when something moved.
 */
export const run: CommandRun<DriftOptions> = async (ctx) => {
  const { client, instance } = connect(ctx);
  const project = loadOrFail(ctx);
  let applied: Declaration = { objects: {}, views: {} };
  let version = 0;
  try {
    const src = await client.sources.get(project.source);
    applied = src.declaration;
    version = src.version;
  } catch (e) {
    // never pushed: nothing was applied, so everything in the files is a pending edit
    if (!(e instanceof ServiceRequestError && e.code === 'SCHEMA_SOURCE_NOT_FOUND')) throw e;
  }
  const report = compareDrift({ source: project.source, version, applied, instance: await storedDeclaration(client, project.source), files: project.declaration });
  const format = ctx.global.json ? 'json' : (ctx.options.format ?? 'text');
  if (format === 'json') ctx.stdout.write(`${JSON.stringify({ ...(instance.target ? { target: instance.target.name } : {}), baseUrl: client.baseUrl, ...report }, null, 2)}\n`);
  else if (format === 'markdown') ctx.stdout.write(renderDriftMarkdown(report, instance.target?.name, client.baseUrl));
  else ctx.stdout.write(renderDriftText(report, ctx.colors, instance.target ? `target ${instance.target.name} (${client.baseUrl})` : client.baseUrl));
  return ctx.options.detailedExitcode === true && report.items.length > 0 ? 2 : 0;
};
