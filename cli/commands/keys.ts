import type { CommandRun } from '../context.js';
import { CliError } from '../errors.js';
import { clientFor } from '../instance.js';
import { renderTable } from '../render/table.js';

/**
 * `schemasync keys create <name> --role <role> [--scopes a,b] | list | revoke <id>`
 * (contract.md §4 "administration"), over HTTP through the SDK like every other command.
 */
interface KeysOptions {
  role?: string;
  scopes?: string;
}

export const run: CommandRun<KeysOptions> = async (ctx) => {
  const [action, ...rest] = ctx.args;
  const client = clientFor(ctx);
  const out = (s: string) => ctx.stdout.write(`${s}\n`);
  const c = ctx.colors;

  switch (action) {
    case 'create': {
      const name = rest[0];
      if (!name) throw new CliError('keys create needs a name: schemasync keys create <name> --role <role>');
      const role = ctx.options.role ?? 'member';
      const input: { name: string; role: string; scopes?: string[] } = { name, role };
      if (ctx.options.scopes !== undefined) {
        input.scopes = ctx.options.scopes.split(',').map((s) => s.trim()).filter(Boolean);
      }
      const key = await client.keys.create(input);
      if (ctx.global.json) {
        out(JSON.stringify(key));
      } else {
        // The scopes the server stored, which may be the creator's own when none were asked for.
        out(`created key ${key.id} "${key.name}" (role ${key.role}, scopes ${key.scopes ? key.scopes.join(',') : '(role)'})`);
        out(`secret (shown once, store it now): ${c.bold(key.secret)}`);
      }
      return 0;
    }
    case 'list': {
      const keys = await client.keys.list();
      if (ctx.global.json) {
        out(JSON.stringify(keys));
        return 0;
      }
      if (keys.length === 0) {
        out('no keys');
        return 0;
      }
      const rows = keys.map((k) => [
        k.id,
        k.name,
        k.role,
        k.scopes ? k.scopes.join(',') : '(role)',
        k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
        k.lastUsedAt ?? '-',
      ]);
      for (const l of renderTable(['ID', 'NAME', 'ROLE', 'SCOPES', 'STATUS', 'LAST USED'], rows, c)) out(l);
      return 0;
    }
    case 'revoke': {
      const id = rest[0];
      if (!id) throw new CliError('keys revoke needs a key id: schemasync keys revoke <id> (see schemasync keys list)');
      await client.keys.revoke(id);
      if (ctx.global.json) out(JSON.stringify({ id, revoked: true }));
      else out(`revoked key ${id}`);
      return 0;
    }
    default:
      throw new CliError(`unknown keys action "${action ?? ''}": use create, list or revoke`);
  }
};
