import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../cli/context.js';
import { CliError } from '../../cli/errors.js';
import { liveApiKey, resolveInstance } from '../../cli/instance.js';
import { sdkPush, syncCommandFor } from '../../cli/watch-session.js';
import { commandName } from '../../cli/command-name.js';
import type { Declaration } from '../../engine/model/declaration.js';

/**
 * Which server a command reaches when dev/watch are involved (issue 6): `sync --data`,
 * the key watch reads per push, and the command dev prints for held-back steps.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function project(config: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'ss-watch-inst-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'schemasync.yaml'), config);
  return dir;
}

function writeCreds(dataDir: string, creds: { baseUrl: string; apiKey: string }): string {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'credentials.json');
  writeFileSync(file, JSON.stringify(creds));
  return file;
}

const ctxOf = (cwd: string, options: object = {}, global: object = {}) =>
  ({ cwd, global: { color: false, ...global }, options, args: [] }) as unknown as CommandContext<unknown>;

describe('sync --data <dir>', () => {
  it("takes the key (and, below env and config, the URL) from that folder's credentials.json, over the env key", () => {
    const cwd = project('source: crm\n');
    writeCreds(join(cwd, '.schemasync'), { baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'default-key' });
    writeCreds(join(cwd, 'devdata'), { baseUrl: 'http://127.0.0.1:2/v1', apiKey: 'dev-key' });
    const withData = ctxOf(cwd, { data: 'devdata' });
    expect(resolveInstance(withData, { SCHEMASYNC_API_KEY: 'env-key' })).toEqual({ baseUrl: 'http://127.0.0.1:2/v1', apiKey: 'dev-key', from: 'credentials' });
    expect(resolveInstance(ctxOf(cwd, { data: 'devdata' }, { apiKey: 'flag-key' }), {}).apiKey).toBe('flag-key');
    expect(resolveInstance(ctxOf(cwd), {}).apiKey).toBe('default-key');
  });

  it('a folder without credentials.json is exit 2 naming it', () => {
    const cwd = project('source: crm\nbaseUrl: http://x/v1\n');
    let err: unknown;
    try {
      resolveInstance(ctxOf(cwd, { data: 'nowhere' }), {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(2);
    expect((err as CliError).message).toContain('nowhere');
  });
});

describe('liveApiKey', () => {
  it('reads credentials.json again on every call when no key was given', () => {
    const cwd = project('source: crm\nbaseUrl: http://127.0.0.1:1/v1\n');
    const key = liveApiKey(ctxOf(cwd), {});
    expect(key()).toBeUndefined();
    writeCreds(join(cwd, '.schemasync'), { baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'first' });
    expect(key()).toBe('first');
    writeCreds(join(cwd, '.schemasync'), { baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'second' });
    expect(key()).toBe('second');
  });

  it('keeps a key given by flag or env', () => {
    const cwd = project('source: crm\n');
    writeCreds(join(cwd, '.schemasync'), { baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'file' });
    expect(liveApiKey(ctxOf(cwd, {}, { apiKey: 'flag' }), {})()).toBe('flag');
    expect(liveApiKey(ctxOf(cwd), { SCHEMASYNC_API_KEY: 'env' })()).toBe('env');
  });
});

describe("the held-back command dev prints", () => {
  const server = (cwd: string, data: string, baseUrl: string) => ({
    baseUrl,
    dataDir: join(cwd, data),
    credentialsPath: writeCreds(join(cwd, data), { baseUrl, apiKey: 'k' }),
  });

  it('is plain `schemasync sync` when the usual lookup reaches dev', () => {
    const cwd = project('source: crm\n');
    expect(syncCommandFor(ctxOf(cwd), server(cwd, '.schemasync', 'http://127.0.0.1:4555/v1'), {}, 'schemasync')).toBe('schemasync sync');
    // From a project's own install the command is reached through npx (cli/command-name.ts).
    expect(syncCommandFor(ctxOf(cwd), server(cwd, '.schemasync', 'http://127.0.0.1:4555/v1'), {}, 'npx schemasync')).toBe('npx schemasync sync');
    expect(commandName('/home/me/app/node_modules/.bin/schemasync')).toBe('npx schemasync');
    expect(commandName('/home/me/schemasync/bin/schemasync')).toBe('schemasync');
  });

  it('adds --base-url when schemasync.yaml (or env) names another server', () => {
    const cwd = project('source: crm\nbaseUrl: http://127.0.0.1:4400/v1\n');
    const s = server(cwd, '.schemasync', 'http://127.0.0.1:4555/v1');
    expect(syncCommandFor(ctxOf(cwd), s, {}, 'schemasync')).toBe('schemasync sync --base-url http://127.0.0.1:4555/v1');
    const plain = project('source: crm\n');
    expect(syncCommandFor(ctxOf(plain), server(plain, '.schemasync', 'http://127.0.0.1:4555/v1'), { SCHEMASYNC_BASE_URL: 'http://other/v1' }, 'schemasync')).toBe(
      'schemasync sync --base-url http://127.0.0.1:4555/v1',
    );
  });

  it('adds --data for another data folder (quoted when it needs quoting) or an env key, and keeps --config', () => {
    const cwd = project('source: crm\n');
    expect(syncCommandFor(ctxOf(cwd, {}, { config: 'schemasync.yaml' }), server(cwd, 'my data', 'http://127.0.0.1:4555/v1'), {}, 'schemasync')).toBe(
      "schemasync sync --config schemasync.yaml --data 'my data'",
    );
    const other = project('source: crm\n');
    expect(syncCommandFor(ctxOf(other), server(other, '.schemasync', 'http://127.0.0.1:4555/v1'), { SCHEMASYNC_API_KEY: 'stale' }, 'schemasync')).toBe(
      'schemasync sync --data .schemasync',
    );
  });
});

describe("watch's push while a local server is starting", () => {
  /** A stand-in server that knows one key: 401 without it, a push answer with it. */
  async function keyServer(key: string): Promise<{ baseUrl: string; seen: (string | undefined)[]; server: Server }> {
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      const auth = req.headers.authorization;
      seen.push(auth);
      req.resume();
      res.setHeader('content-type', 'application/json');
      if (auth !== `Bearer ${key}`) {
        res.statusCode = 401;
        res.end(JSON.stringify({ success: false, statusCode: 401, code: 'SCHEMA_UNAUTHORIZED', message: 'no key' }));
        return;
      }
      res.end(JSON.stringify({ success: true, data: { version: 1, applied: true, plan: { steps: [], conflicts: [] } } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    return { baseUrl: `http://127.0.0.1:${port}/v1`, seen, server };
  }
  const decl = {} as Declaration;
  const call = { dryRun: false, allowDestructive: false as const };

  it('a key that appears between the send and the 401 is tried again at once', async () => {
    const s = await keyServer('fresh');
    try {
      let asked = 0;
      const push = sdkPush(s.baseUrl, () => (asked++ === 0 ? undefined : 'fresh'));
      expect((await push('crm', decl, call)).version).toBe(1);
      expect(s.seen).toEqual([undefined, 'Bearer fresh']);
    } finally {
      s.server.close();
    }
  });

  it('no key at all yet is status 0 (the loop retries), a wrong key stays a 401', async () => {
    const s = await keyServer('right');
    try {
      await expect(sdkPush(s.baseUrl, () => undefined)('crm', decl, call)).rejects.toMatchObject({ status: 0, message: /no API key yet/ });
      await expect(sdkPush(s.baseUrl, () => 'wrong')('crm', decl, call)).rejects.toMatchObject({ status: 401 });
    } finally {
      s.server.close();
    }
  });
});
