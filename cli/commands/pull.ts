import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { parse, stringify } from 'yaml';
import type { AttributeDecl, Declaration, ObjectDecl } from '../../engine/model/declaration.js';
import type { StoredObject } from '../../engine/model/stored.js';
import { storedSpec } from '../../engine/plan/attributes.js';
import type { CommandRun } from '../context.js';
import { CliError } from '../errors.js';
import { clientFor, configPathOf } from '../instance.js';
import { storedDeclaration } from './plan.js';

interface PullOptions {
  runtime?: boolean;
  out?: string;
}

/** A runtime object as a declaration (system attributes are never declarable). */
export function objectDecl(o: StoredObject): ObjectDecl {
  const attributes: Record<string, AttributeDecl> = {};
  for (const a of o.attributes) {
    if (a.system) continue;
    const { name: _n, ...spec } = storedSpec(a);
    attributes[a.name] = spec;
  }
  return { ...(o.label ? { label: o.label } : {}), ...(o.description ? { description: o.description } : {}), attributes };
}

/** Drop the one-push `renamedFrom` hints: pulled files describe the state, not a move. */
function withoutHints(d: Declaration): Declaration {
  const objects: Record<string, ObjectDecl> = {};
  for (const [name, o] of Object.entries(d.objects ?? {})) {
    const { renamedFrom: _r, ...rest } = o;
    const attributes: Record<string, AttributeDecl> = {};
    for (const [a, spec] of Object.entries(o.attributes ?? {})) {
      const { renamedFrom: _ar, ...s } = spec;
      attributes[a] = s;
    }
    objects[name] = { ...rest, attributes };
  }
  return { objects, views: d.views ?? {} };
}

function schemaFolder(configPath: string): string | undefined {
  if (!existsSync(configPath)) return undefined;
  try {
    const v = parse(readFileSync(configPath, 'utf8')) as { schema?: unknown } | null;
    return typeof v?.schema === 'string' ? resolve(dirname(configPath), v.schema) : resolve(dirname(configPath), 'schema');
  } catch {
    return undefined;
  }
}

function sourceOf(configPath: string): string | undefined {
  try {
    const v = parse(readFileSync(configPath, 'utf8')) as { source?: unknown } | null;
    return typeof v?.source === 'string' ? v.source : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `schemasync pull` (contract.md §4): the source's stored declaration (or, with
 * --runtime, every runtime object) as declaration YAML, one file per object plus
 * views.yaml, so that `plan` on the written files shows no changes.
 */
export const run: CommandRun<PullOptions> = async (ctx) => {
  const configPath = configPathOf(ctx);
  const client = clientFor(ctx);
  const folder = ctx.options.out ? resolve(ctx.cwd, ctx.options.out) : schemaFolder(configPath);
  if (!folder) throw new CliError('No folder to write into: pass --out <dir> or run where schemasync.yaml is.');

  let declaration: Declaration;
  if (ctx.options.runtime) {
    const objects = (await client.schema.listObjects()).filter((o) => o.owner.kind === 'runtime');
    declaration = { objects: Object.fromEntries(objects.map((o) => [o.name, objectDecl(o)])), views: {} };
  } else {
    const source = sourceOf(configPath);
    if (!source) throw new CliError(`No source id: ${relative(ctx.cwd, configPath)} is missing or has no "source".`, { hint: 'Run `schemasync init`, or pull runtime objects with --runtime.' });
    declaration = withoutHints(await storedDeclaration(client, source));
  }

  mkdirSync(folder, { recursive: true });
  const written: string[] = [];
  for (const [name, o] of Object.entries(declaration.objects)) {
    const file = join(folder, `${name}.yaml`);
    writeFileSync(file, stringify({ objects: { [name]: o } }));
    written.push(file);
  }
  if (Object.keys(declaration.views).length > 0) {
    const file = join(folder, 'views.yaml');
    writeFileSync(file, stringify({ views: declaration.views }));
    written.push(file);
  }
  if (ctx.global.json) ctx.stdout.write(`${JSON.stringify({ files: written.map((f) => relative(ctx.cwd, f)) }, null, 2)}\n`);
  else if (written.length === 0) ctx.stdout.write('Nothing to pull: no objects or views.\n');
  else for (const f of written) ctx.stdout.write(`wrote ${relative(ctx.cwd, f)}\n`);
  return 0;
};
