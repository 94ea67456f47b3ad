import { stringify } from 'yaml';
import { RECORD_ACTIONS, SCHEMA_ACCESS, type RecordAction, type RoleDecl, type RolePermission, type SchemaAccess } from '../../engine/model/roles.js';
import type { CommandRun } from '../context.js';
import { CliError } from '../errors.js';
import { valueDataClient } from '../instance.js';
import { renderTable } from '../render/table.js';

/**
 * `schemasync roles list | get <name> | create <name> | update <name> | delete <name>`
 * (contract.md §4 "administration"), over the SDK. Permissions are given as
 * `--allow deal:read,create` (repeatable) or the whole role as `--data '<json>'`. Roles a
 * source declares are changed in its YAML; the routes refuse them here (409 SCHEMA_DUPLICATE).
 */
interface RolesOptions {
  allow?: string[];
  schema?: string;
  label?: string;
  data?: string;
}

/** `deal:read,create` → { object: deal, actions: [read, create] }. */
export function parseAllow(text: string): RolePermission {
  const at = text.lastIndexOf(':');
  const object = at > 0 ? text.slice(0, at) : '';
  const actions = (at > 0 ? text.slice(at + 1) : '').split(',').map((a) => a.trim()).filter(Boolean);
  if (!object || actions.length === 0) throw new CliError(`--allow ${text}: use <object|*>:<actions>, e.g. --allow deal:read,create`);
  const bad = actions.filter((a) => !(RECORD_ACTIONS as readonly string[]).includes(a));
  if (bad.length > 0) throw new CliError(`--allow ${text}: unknown action ${bad.map((a) => `"${a}"`).join(', ')} (use ${RECORD_ACTIONS.join(', ')})`);
  return { object, actions: actions as RecordAction[] };
}

/**
 * The role to send: `current` (update: the stored role, so what this call does not name keeps
 * its value; the route replaces the whole role), then `--data`'s fields, then the flags.
 */
function roleBody(o: RolesOptions, current?: RoleDecl): RoleDecl {
  let base: Partial<RoleDecl> = {};
  if (current) {
    const { label, description, schema, permissions } = current;
    base = { permissions, ...(label !== undefined ? { label } : {}), ...(description !== undefined ? { description } : {}), ...(schema !== undefined ? { schema } : {}) };
  }
  if (o.data !== undefined) {
    try {
      base = { ...base, ...(JSON.parse(o.data) as Partial<RoleDecl>) };
    } catch (err) {
      throw new CliError(`--data is not valid JSON: ${(err as Error).message}`);
    }
  }
  const role: RoleDecl = { ...base, permissions: base.permissions ?? [] };
  if (o.allow?.length) role.permissions = o.allow.map(parseAllow);
  if (o.label !== undefined) role.label = o.label;
  if (o.schema !== undefined) {
    if (!(SCHEMA_ACCESS as readonly string[]).includes(o.schema)) throw new CliError(`--schema must be one of ${SCHEMA_ACCESS.join(', ')}`);
    role.schema = o.schema as SchemaAccess;
  }
  return role;
}

const grants = (permissions: readonly RolePermission[]): string => permissions.map((p) => `${p.object}:${p.actions.join(',')}`).join(' ') || '(none)';

export const run: CommandRun<RolesOptions> = async (ctx) => {
  const [action, name] = ctx.args;
  // Its --data is the role as JSON, not a data folder.
  const client = valueDataClient(ctx);
  const out = (s: string) => ctx.stdout.write(`${s}\n`);
  const needName = (): string => {
    if (!name) throw new CliError(`roles ${action} needs a role name: schemasync roles ${action} <name>`, { hint: 'schemasync roles list shows them' });
    return name;
  };
  switch (action) {
    case 'list': {
      const roles = await client.roles.list();
      if (ctx.global.json) {
        out(JSON.stringify(roles));
        return 0;
      }
      const owner = (r: (typeof roles)[number]) => (r.builtIn ? 'built in' : r.owner?.kind === 'source' ? `source ${r.owner.id ?? ''}` : (r.owner?.kind ?? ''));
      const rows = roles.map((r) => [r.name, owner(r), r.schema, grants(r.permissions), r.keys]);
      for (const l of renderTable(['NAME', 'OWNER', 'SCHEMA', 'RECORDS', 'KEYS'], rows, ctx.colors)) out(l);
      return 0;
    }
    case 'get': {
      const role = await client.roles.get(needName());
      if (ctx.global.json) out(JSON.stringify(role));
      else ctx.stdout.write(stringify({ [role.name]: { ...role, name: undefined } }));
      return 0;
    }
    case 'create':
    case 'update': {
      const role =
        action === 'create'
          ? await client.roles.create(needName(), roleBody(ctx.options))
          : await client.roles.update(needName(), roleBody(ctx.options, await client.roles.get(needName())));
      if (ctx.global.json) out(JSON.stringify(role));
      else out(`${action === 'create' ? 'created' : 'updated'} role ${role.name}: ${grants(role.permissions)}; schema ${role.schema}`);
      return 0;
    }
    case 'delete': {
      await client.roles.delete(needName());
      if (ctx.global.json) out(JSON.stringify({ name, deleted: true }));
      else out(`deleted role ${name}`);
      return 0;
    }
    default:
      throw new CliError(`unknown roles action "${action ?? ''}": use list, get, create, update or delete`);
  }
};
