import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { SchemaClient } from '../engine/sdk/index.js';
import type { CommandContext } from './context.js';
import { CliError } from './errors.js';

/**
 * Which instance a command talks to (contract.md §2, §4): base URL from --base-url >
 * SCHEMASYNC_BASE_URL > schemasync.yaml `baseUrl` > the local server's
 * `<data>/credentials.json`; the key from --api-key > SCHEMASYNC_API_KEY > that
 * credentials file. The credentials file is looked for in `.schemasync/` next to the
 * config file, then in the working directory.
 */
export interface Instance {
  baseUrl: string;
  apiKey: string | undefined;
  /** Where the base URL came from, for messages. */
  from: 'flag' | 'env' | 'config' | 'credentials';
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
  try {
    const v = parse(readFileSync(configPath, 'utf8')) as { baseUrl?: unknown } | null;
    return typeof v?.baseUrl === 'string' && v.baseUrl !== '' ? v.baseUrl : undefined;
  } catch {
    return undefined; // a broken config is reported by the loader, not here
  }
}

export function configPathOf(ctx: Pick<CommandContext, 'cwd' | 'global'>): string {
  return resolve(ctx.cwd, ctx.global.config ?? 'schemasync.yaml');
}

export function findCredentials(ctx: Pick<CommandContext, 'cwd' | 'global'>): Credentials | undefined {
  const candidates = [join(dirname(configPathOf(ctx)), '.schemasync', 'credentials.json'), join(ctx.cwd, '.schemasync', 'credentials.json')];
  for (const file of candidates) {
    if (existsSync(file)) {
      const c = readJson(file);
      if (c) return c;
    }
  }
  return undefined;
}

export function resolveInstance(ctx: Pick<CommandContext, 'cwd' | 'global'>, env: NodeJS.ProcessEnv = process.env): Instance {
  const nonEmpty = (v: string | undefined) => (v !== undefined && v !== '' ? v : undefined);
  const creds = findCredentials(ctx);
  const apiKey = nonEmpty(ctx.global.apiKey) ?? nonEmpty(env['SCHEMASYNC_API_KEY']) ?? nonEmpty(creds?.apiKey);
  const pick = (baseUrl: string, from: Instance['from']): Instance => ({ baseUrl, apiKey, from });
  const flag = nonEmpty(ctx.global.baseUrl);
  if (flag) return pick(flag, 'flag');
  const fromEnv = nonEmpty(env['SCHEMASYNC_BASE_URL']);
  if (fromEnv) return pick(fromEnv, 'env');
  const fromConfig = configBaseUrl(configPathOf(ctx));
  if (fromConfig) return pick(fromConfig, 'config');
  const fromCreds = nonEmpty(creds?.baseUrl);
  if (fromCreds) return pick(fromCreds, 'credentials');
  throw new CliError('No instance configured: no --base-url, SCHEMASYNC_BASE_URL, baseUrl in schemasync.yaml, or running local server.', {
    exitCode: 2,
    hint: 'Start one with `schemasync serve` (or `schemasync dev`), or pass --base-url and --api-key.',
  });
}

export function clientFor(ctx: Pick<CommandContext, 'cwd' | 'global'>, env: NodeJS.ProcessEnv = process.env): SchemaClient {
  const inst = resolveInstance(ctx, env);
  return new SchemaClient({ baseUrl: inst.baseUrl, apiKey: inst.apiKey });
}
