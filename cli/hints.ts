import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { ROLE_ACTIONS, type Action } from '../engine/server/permissions.js';
import type { Instance, InstanceContext } from './instance.js';
import { isLoopbackUrl } from './loopback.js';
import { credentialsCandidates, findCredentials, resolveInstance, sameUrl } from './instance.js';

/**
 * The `hint:` lines the CLI adds to a service refusal it knows the remedy for
 * (contract.md §4). Loaded only when a command fails, so `--help` stays light.
 */

/**
 * What each command needs of its key (contract.md §3 role table). `plan` is a dry run,
 * so schema read; `sync` pushes, so schema write. Keyed by command, then sub-command.
 */
const NEEDS: Readonly<Record<string, Action | Readonly<Record<string, Action>>>> = {
  plan: 'schema:read',
  sync: 'schema:write',
  pull: 'schema:read',
  watch: 'schema:write',
  keys: 'keys:manage',
  files: { upload: 'files:write', rm: 'files:write', delete: 'files:write', get: 'files:read', download: 'files:read' },
};

/** The action a command needs, when the table knows it. */
export function actionFor(command: string, args: readonly string[]): Action | undefined {
  const need = NEEDS[command];
  if (need === undefined) return undefined;
  return typeof need === 'string' ? need : need[args[0] ?? ''];
}

/** "owner, admin or member": the built-in roles whose table row allows the action. */
function rolesAllowing(action: Action): string {
  const roles = Object.keys(ROLE_ACTIONS).filter((r) => ROLE_ACTIONS[r]!.has(action));
  return roles.length <= 1 ? roles.join('') : `${roles.slice(0, -1).join(', ')} or ${roles[roles.length - 1]}`;
}

export function forbiddenHint(command: string, args: readonly string[]): string | undefined {
  const action = actionFor(command, args);
  if (action === undefined) return undefined;
  return `\`schemasync ${command}\` needs ${action}: a key with role ${rolesAllowing(action)}, and the ${action} scope if the key has scopes (schemasync keys create <name> --role … --scopes …).`;
}

/** A local server (`serve`/`dev`) is the one whose limits the user can switch off. */
export function throttledHint(baseUrl: string | undefined): string {
  return isLoopbackUrl(baseUrl)
    ? 'The local server limits requests per client and minute, as the hosted service does; for development restart it with --no-rate-limit (schemasync dev --no-rate-limit), or wait a minute.'
    : 'The instance limits requests per client and minute; wait a minute and run it again.';
}

/** Where the base URL of a command came from, in the words the user set it with. */
function urlSource(instance: Instance, ctx: InstanceContext): string {
  switch (instance.from) {
    case 'flag':
      return '--base-url';
    case 'env':
      return 'SCHEMASYNC_BASE_URL';
    case 'target':
      return `the baseUrl of target ${instance.target?.name ?? '?'} in schemasync.yaml`;
    case 'config':
      return "schemasync.yaml's baseUrl";
    case 'credentials': {
      const file = credentialsCandidates(ctx).find((f) => existsSync(f));
      return file === undefined ? 'credentials.json' : relative(ctx.cwd, file) || file;
    }
  }
}

/**
 * The instance a command reached, where its URL came from, and the address this folder's
 * local server last wrote to its credentials.json when that is another one; undefined when
 * no instance resolves.
 */
function addressSeen(ctx: InstanceContext): { instance: Instance; from: string; elsewhere: string | undefined } | undefined {
  let instance: Instance;
  try {
    instance = resolveInstance(ctx);
  } catch {
    return undefined;
  }
  const written = findCredentials(ctx)?.baseUrl;
  const elsewhere = typeof written === 'string' && written !== '' && !sameUrl(written, instance.baseUrl) ? written : undefined;
  return { instance, from: urlSource(instance, ctx), elsewhere };
}

/**
 * No answer from the instance (status 0: refused, timed out, cut off). The commonest cause
 * on a laptop: a local server started on another port than the project file names (`dev
 * --port 4555` beside `baseUrl: …:4400`), or not started at all. The hint says where the URL
 * came from and, when a local server's credentials name another address, that one.
 */
export function unreachableHint(ctx: InstanceContext): string | undefined {
  const seen = addressSeen(ctx);
  if (!seen) return undefined;
  const { instance, from, elsewhere: written } = seen;
  if (!isLoopbackUrl(instance.baseUrl)) return `The URL came from ${from}: check the address and that the instance is up.`;
  if (written !== undefined && instance.from !== 'credentials') {
    const change = instance.from === 'config' || instance.from === 'target' ? `, or set ${from} to it` : '';
    return `The URL came from ${from}, but the local server here last started at ${written} (its credentials.json): pass --base-url ${written}${change}.`;
  }
  return `The URL came from ${from}. Start the local server with \`schemasync dev\` (or \`schemasync serve\`), or point --base-url (env SCHEMASYNC_BASE_URL) at the instance.`;
}

/**
 * The instance does not know the key (401). Commonest on a laptop: the project file names one
 * local server while another one, started on another port, wrote this folder's key; or the
 * key was revoked. The hint says where the URL came from and, when this folder's local server
 * last started elsewhere, that address.
 */
export function unknownKeyHint(ctx: InstanceContext): string | undefined {
  const seen = addressSeen(ctx);
  if (!seen) return undefined;
  const { from, elsewhere: written } = seen;
  if (written !== undefined) {
    return `The URL came from ${from}, but the local server whose key this is last started at ${written} (its credentials.json): pass --base-url ${written}, or set ${from} to it.`;
  }
  return `The URL came from ${from}; the key (--api-key, SCHEMASYNC_API_KEY or credentials.json) is not one this instance knows: revoked, or another instance's.`;
}

/** The hint for a failure from an instance, or undefined when the CLI knows no remedy. */
export function serviceHint(
  failure: { status: number; code?: string | undefined },
  command: { name: string; args: readonly string[]; ctx: InstanceContext },
): string | undefined {
  if (failure.status === 0) return unreachableHint(command.ctx);
  if (failure.status === 401) return unknownKeyHint(command.ctx);
  if (failure.status === 403 && failure.code === 'SCHEMA_FORBIDDEN') return forbiddenHint(command.name, command.args);
  if (failure.status === 429) {
    let baseUrl: string | undefined;
    try {
      baseUrl = resolveInstance(command.ctx).baseUrl;
    } catch {
      baseUrl = undefined;
    }
    return throttledHint(baseUrl);
  }
  return undefined;
}
