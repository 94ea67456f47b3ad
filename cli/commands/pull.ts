import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { parse, stringify } from 'yaml';
import type { AttributeDecl, Declaration, ObjectDecl } from '../../engine/model/declaration.js';
import { isOwnedBySource, type Owner, type StoredObject, type StoredRole, type StoredView } from '../../engine/model/stored.js';
import { roleDecl } from '../../engine/plan/roles.js';
import { storedSpec } from '../../engine/plan/attributes.js';
import type { SchemaClient } from '../../engine/sdk/index.js';
import type { CommandRun } from '../context.js';
import { CliError } from '../errors.js';
import { clientFor, configPathOf } from '../instance.js';

interface PullOptions {
  runtime?: boolean;
  out?: string;
  force?: boolean;
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

/**
 * What the instance holds for a source, as a declaration: its objects with the
 * attributes it owns (runtime attributes on them stay runtime, so they are left out, as
 * plan would keep them) and its views. Built from the stored schema, not the last pushed
 * declaration, so changes made at runtime since (a relabelled attribute) are pulled too.
 */
export function sourceDeclaration(objects: StoredObject[], views: StoredView[], source: string, roles: readonly StoredRole[] = []): Declaration {
  const mine = (owner: Owner) => isOwnedBySource(owner, source);
  const out: Declaration = { objects: {}, views: {} };
  for (const o of objects) {
    if (!mine(o.owner)) continue;
    const decl = objectDecl({ ...o, attributes: o.attributes.filter((a) => mine(a.owner)) });
    out.objects[o.name] = decl;
  }
  for (const v of views) {
    if (!mine(v.owner)) continue;
    const { name, owner: _o, ...decl } = v;
    out.views[name] = decl;
  }
  for (const r of roles) {
    if (!mine(r.owner)) continue;
    (out.roles ??= {})[r.name] = roleDecl(r);
  }
  return out;
}

/** What the instance holds for a source, as a declaration (pull, plan --diff, drift). */
export async function storedDeclaration(client: SchemaClient, source: string): Promise<Declaration> {
  // GET /roles answers built-ins too, and a `keys`/`builtIn` pair that is not part of a declaration.
  const roles: StoredRole[] = (await client.roles.list()).filter((r) => !r.builtIn && r.owner).map(({ builtIn: _b, keys: _k, owner, ...r }) => ({ ...r, owner: owner! }));
  return sourceDeclaration(await client.schema.listObjects(), await client.views.list(), source, roles);
}

/** Declaration files already in the folder (the project file itself aside). */
function declarationFiles(folder: string, configPath: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((f) => /\.ya?ml$/i.test(f) && resolve(folder, f) !== resolve(configPath))
    .sort();
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
 * `schemasync pull` (contract.md §4): the source's stored schema (or, with
 * --runtime, every runtime object) as declaration YAML, one file per object plus
 * views.yaml, so that `plan` on the written files shows no changes.
 */
export const run: CommandRun<PullOptions> = async (ctx) => {
  const configPath = configPathOf(ctx);
  const client = clientFor(ctx);
  const folder = ctx.options.out ? resolve(ctx.cwd, ctx.options.out) : schemaFolder(configPath);
  if (!folder) throw new CliError('No folder to write into: pass --out <dir> or run where schemasync.yaml is.');

  // Writing beside existing declaration files would declare every object twice.
  const existing = declarationFiles(folder, configPath);
  if (existing.length > 0 && !ctx.options.force) {
    throw new CliError(`${relative(ctx.cwd, folder) || folder} already holds declaration files (${existing.slice(0, 3).join(', ')}${existing.length > 3 ? ', …' : ''}); nothing was written.`, {
      hint: 'Pull into an empty or new folder with --out <dir>, or pass --force to overwrite files of the same name.',
    });
  }

  let declaration: Declaration;
  if (ctx.options.runtime) {
    const objects = (await client.schema.listObjects()).filter((o) => o.owner.kind === 'runtime');
    declaration = { objects: Object.fromEntries(objects.map((o) => [o.name, objectDecl(o)])), views: {} };
  } else {
    const source = sourceOf(configPath);
    if (!source) throw new CliError(`No source id: ${relative(ctx.cwd, configPath)} is missing or has no "source".`, { hint: 'Run `schemasync init`, or pull runtime objects with --runtime.' });
    declaration = await storedDeclaration(client, source);
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
  if (declaration.roles && Object.keys(declaration.roles).length > 0) {
    const file = join(folder, 'roles.yaml');
    writeFileSync(file, stringify({ roles: declaration.roles }));
    written.push(file);
  }
  if (ctx.global.json) ctx.stdout.write(`${JSON.stringify({ files: written.map((f) => relative(ctx.cwd, f)) }, null, 2)}\n`);
  else if (written.length === 0) ctx.stdout.write('Nothing to pull: no objects or views.\n');
  else for (const f of written) ctx.stdout.write(`wrote ${relative(ctx.cwd, f)}\n`);
  return 0;
};
