import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { SchemaClient } from '../engine/sdk/index.js';
import type { CommandContext } from './context.js';
import { CliError } from './errors.js';
import { readConfigYaml } from './yaml-text.js';
import { pickTarget, type PickedTarget } from './target.js';
import { nodeFetch } from './node-fetch.js';

/**
 * Which instance a command talks to (contract.md §2, §4): base URL from --base-url >
 * SCHEMASYNC_BASE_URL > schemasync.yaml `baseUrl` > the local server's
 * `<data>/credentials.json`; the key from --api-key > SCHEMASYNC_API_KEY > that
 * credentials file. The credentials file is looked for in `.schemasync/` next to the
 * config file, then in the working directory — or, for a command given `--data <dir>`
 * (sync, plan), only in `<dir>`: a local server started with another data folder. A key
 * from `--data` outranks the env key, being a flag.
 */
export interface Instance {
  baseUrl: string;
  apiKey: string | undefined;
  /** Where the base URL came from, for messages. */
  from: 'flag' | 'env' | 'config' | 'credentials' | 'target';
  /** The target of `targets:` in force, whose policy applies (contract.md §7). */
  target?: PickedTarget;
}

interface Credentials {
  baseUrl?: string;
  apiKey?: string;
}

function readJson(file: string): Credentials | undefined {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return v !== null && typeof v === 'object' ? (v as Credentials) : undefined;
  } catch {
    return undefined;
  }
}

function configBaseUrl(configPath: string): string | undefined {
  const v = readConfigYaml(configPath) as { baseUrl?: unknown } | null | undefined;
  return typeof v?.baseUrl === 'string' && v.baseUrl !== '' ? v.baseUrl : undefined;
}

/** What instance resolution reads of a command's context; `options.data` when it has one. */
export type InstanceContext = Pick<CommandContext, 'cwd' | 'global'> & { options?: unknown };

function dataOption(ctx: InstanceContext): string | undefined {
  const data = (ctx.options as { data?: unknown } | undefined)?.data;
  return typeof data === 'string' && data !== '' ? data : undefined;
}

export function configPathOf(ctx: Pick<CommandContext, 'cwd' | 'global'>): string {
  return resolve(ctx.cwd, ctx.global.config ?? 'schemasync.yaml');
}

/** Where the credentials file is looked for, first match wins. */
export function credentialsCandidates(ctx: InstanceContext): string[] {
  const data = dataOption(ctx);
  if (data !== undefined) return [join(resolve(ctx.cwd, data), 'credentials.json')];
  return [join(dirname(configPathOf(ctx)), '.schemasync', 'credentials.json'), join(ctx.cwd, '.schemasync', 'credentials.json')];
}

export function findCredentials(ctx: InstanceContext): Credentials | undefined {
  for (const file of credentialsCandidates(ctx)) {
    if (existsSync(file)) {
      const c = readJson(file);
      if (c) return c;
    }
  }
  return undefined;
}

const nonEmpty = (v: string | undefined) => (v !== undefined && v !== '' ? v : undefined);

/**
 * The key the command was given, before any credentials file: --api-key, then
 * SCHEMASYNC_API_KEY — except with --data, a flag naming the folder whose key to use,
 * which outranks the env key.
 */
function givenKey(ctx: InstanceContext, env: NodeJS.ProcessEnv): string | undefined {
  return nonEmpty(ctx.global.apiKey) ?? (dataOption(ctx) === undefined ? nonEmpty(env['SCHEMASYNC_API_KEY']) : undefined);
}

export function resolveInstance(ctx: InstanceContext, env: NodeJS.ProcessEnv = process.env): Instance {
  const creds = findCredentials(ctx);
  const data = dataOption(ctx);
  if (data !== undefined && !creds) {
    throw new CliError(`No credentials.json in ${data}`, {
      exitCode: 2,
      hint: `--data names a local server's data folder: start it with \`schemasync serve --data ${data}\` (or dev).`,
    });
  }
  const apiKey = givenKey(ctx, env) ?? nonEmpty(creds?.apiKey);
  const pick = (baseUrl: string, from: Instance['from']): Instance => ({ baseUrl, apiKey, from });
  // Order (contract.md §2, §7): --base-url > an explicit target (--target, SCHEMASYNC_TARGET)
  // > SCHEMASYNC_BASE_URL > the implicit `dev` target > the top-level baseUrl > credentials.
  const target = pickTarget(ctx, configPathOf(ctx), env);
  const onTarget = (t: PickedTarget, baseUrl: string, from: Instance['from']): Instance => ({ baseUrl, apiKey: targetKey(ctx, t, baseUrl, creds, env), from, target: t });
  const flag = nonEmpty(ctx.global.baseUrl);
  if (flag) return target?.explicit ? onTarget(target, flag, 'flag') : pick(flag, 'flag');
  if (target?.explicit) return onTarget(target, target.config.baseUrl, 'target');
  const fromEnv = nonEmpty(env['SCHEMASYNC_BASE_URL']);
  if (fromEnv) return pick(fromEnv, 'env');
  if (target) return onTarget(target, target.config.baseUrl, 'target');
  const fromConfig = configBaseUrl(configPathOf(ctx));
  if (fromConfig) return pick(fromConfig, 'config');
  const fromCreds = nonEmpty(creds?.baseUrl);
  if (fromCreds) return pick(fromCreds, 'credentials');
  throw new CliError('No instance configured: no --base-url, SCHEMASYNC_BASE_URL, baseUrl in schemasync.yaml, or running local server.', {
    exitCode: 2,
    hint: 'Start one with `schemasync serve` (or `schemasync dev`), or pass --base-url and --api-key.',
  });
}

/**
 * A target's key: --api-key, then the env var its `apiKeyEnv` names, then the usual
 * resolution — except that a local server's credentials key is sent only to that server,
 * never to a remote target that happens to be picked beside it.
 */
function targetKey(ctx: InstanceContext, t: PickedTarget, baseUrl: string, creds: Credentials | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const named = t.config.apiKeyEnv !== undefined ? nonEmpty(env[t.config.apiKeyEnv]) : undefined;
  return nonEmpty(ctx.global.apiKey) ?? named ?? givenKey(ctx, env) ?? (sameUrl(creds?.baseUrl, baseUrl) ? nonEmpty(creds?.apiKey) : undefined);
}

/**
 * The key for a long-running command (watch): a key given as a flag or env is fixed;
 * otherwise the credentials file is read again on every call, so a watch started before
 * the local server's first start picks up the key that start writes (and a key rotated
 * by a fresh data folder), instead of failing every push until restarted (issue 6).
 */
export function liveApiKey(ctx: InstanceContext, env: NodeJS.ProcessEnv = process.env): () => string | undefined {
  const fixed = givenKey(ctx, env);
  if (fixed !== undefined) return () => fixed;
  return () => nonEmpty(findCredentials(ctx)?.apiKey);
}

export function clientFor(ctx: InstanceContext, env: NodeJS.ProcessEnv = process.env): SchemaClient {
  return connect(ctx, env).client;
}

/**
 * The client from the global options alone, for commands whose own `--data` is a value (a
 * record, a role, a view as JSON), not the data folder `--data` names for sync and plan.
 */
export function valueDataClient(ctx: Pick<CommandContext, 'cwd' | 'global'>, env: NodeJS.ProcessEnv = process.env): SchemaClient {
  return clientFor({ cwd: ctx.cwd, global: ctx.global }, env);
}

/** The client and the target whose policy applies (plan, sync, drift). */
export function connect(ctx: InstanceContext, env: NodeJS.ProcessEnv = process.env): { client: SchemaClient; instance: Instance } {
  const instance = resolveInstance(ctx, env);
  return { client: new SchemaClient({ baseUrl: instance.baseUrl, apiKey: instance.apiKey, fetch: nodeFetch }), instance };
}

/** Two base URLs name the same instance (a trailing slash is no difference). */
export function sameUrl(a: string | undefined, b: string | undefined): boolean {
  const norm = (u: string | undefined) => u?.trim().replace(/\/+$/, '');
  return a !== undefined && b !== undefined && norm(a) === norm(b);
}
