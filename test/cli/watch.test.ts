import { rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../support/port.js';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { api, attributesOf, credentials, poll, start, tempProject, type Running } from './watch-helpers.js';

/** `schemasync watch` against a separate `schemasync serve` (issue 6). Needs `npm run build`. */
const deal = (extra = '') => `objects:\n  deal:\n    attributes:\n      title: { type: text }\n${extra}`;

const cleanEnv = { SCHEMASYNC_BASE_URL: '', SCHEMASYNC_API_KEY: '' };

let procs: Running[] = [];
let dirs: string[] = [];
afterEach(async () => {
  for (const p of procs) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
  procs = [];
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function run(args: string[], cwd: string): Running {
  const p = start(args, cwd, cleanEnv);
  procs.push(p);
  return p;
}

describe('schemasync watch', () => {
  it('exits 2 when no instance is configured', async () => {
    const dir = tempProject({ 'deal.yaml': deal() });
    dirs.push(dir);
    const w = run(['watch'], dir);
    expect(await w.exited).toBe(2);
    expect(w.err()).toMatch(/No instance configured/);
  });

  it('survives a stopped server: reports it, keeps watching, and syncs the latest state once it is back', async () => {
    const dir = tempProject({ 'deal.yaml': deal() });
    dirs.push(dir);
    const port = String(await freePort());
    const data = join(dir, '.schemasync');

    // First start creates the owner key and credentials.json next to schemasync.yaml.
    const first = run(['serve', '--port', port, '--data', data, '--quiet'], dir);
    await first.waitFor('listening', 'serve to listen');
    const { baseUrl, apiKey } = credentials(data);
    // Stopped, not asserted: serve prints its banner a moment before it installs its
    // signal handlers, and this test is about watch, not serve's exit code.
    first.child.kill('SIGTERM');
    await first.exited;

    const w = run(['watch'], dir);
    await w.waitFor(/Could not connect to http:\/\/127\.0\.0\.1:\d+\/v1; retrying/, 'the unreachable line');
    writeFileSync(join(dir, 'schema', 'deal.yaml'), deal('      amount: { type: number }\n'));
    await w.waitFor(/\[run \d+\] sync finished: unreachable[\s\S]*\[run \d+\] sync finished: unreachable/, 'a retry');
    expect(w.child.exitCode).toBe(null);

    const again = run(['serve', '--port', port, '--data', data, '--quiet'], dir);
    await again.waitFor('listening', 'serve to listen again');
    await w.waitFor('server reachable again', 'the reconnect line');
    await w.waitFor(/✓ synced crm v\d+: \+1 object/, 'the sync');
    const attrs = await poll(() => attributesOf(baseUrl, apiKey, 'deal'), () => 'deal on the server');
    expect(attrs).toEqual(['title', 'amount']);

    w.child.kill('SIGINT');
    expect(await w.exited).toBe(0);
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
  });

  it('started before the local server ever ran, picks up the key its first start writes', async () => {
    const dir = tempProject({ 'deal.yaml': deal() });
    dirs.push(dir);
    const port = String(await freePort());
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    // No key anywhere yet: no flag, no env, no credentials.json.
    const w = run(['--base-url', baseUrl, 'watch'], dir);
    await w.waitFor(/Could not connect to .*; retrying/, 'the unreachable line');

    const serve = run(['serve', '--port', port, '--data', join(dir, '.schemasync'), '--quiet'], dir);
    await serve.waitFor('listening', 'serve to listen');
    await w.waitFor(/✓ synced crm v\d+: \+1 object/, 'the sync with the new key');
    expect(w.out()).not.toMatch(/SCHEMA_FORBIDDEN|\b(401|403)\b/); // word-bounded: a port such as 40113 is no 401
    const { apiKey } = credentials(join(dir, '.schemasync'));
    expect(await attributesOf(baseUrl, apiKey, 'deal')).toEqual(['title']);

    w.child.kill('SIGINT');
    expect(await w.exited).toBe(0);
    serve.child.kill('SIGINT');
    await serve.exited;
  });

  it('a key that may not push: the refusal comes with the hint naming the role and scope it needs', async () => {
    const dir = tempProject({ 'deal.yaml': deal() });
    dirs.push(dir);
    const port = String(await freePort());
    const data = join(dir, '.schemasync');
    const serve = run(['serve', '--port', port, '--data', data, '--quiet'], dir);
    await serve.waitFor('listening', 'serve to listen');
    const { baseUrl, apiKey } = credentials(data);
    const minted = await api(baseUrl, apiKey, 'POST', '/keys', { name: 'reader', role: 'viewer' });
    const viewerKey = (minted.body as { data: { secret: string } }).data.secret;

    const w = run(['--base-url', baseUrl, '--api-key', viewerKey, 'watch'], dir);
    await w.waitFor(/not synced: 403 SCHEMA_FORBIDDEN[\s\S]*hint: `schemasync watch` needs schema:write: a key with role owner or admin, and the schema:write scope/, 'the refusal and its hint');
    expect(w.child.exitCode).toBe(null);
    expect(await attributesOf(baseUrl, apiKey, 'deal')).toBeUndefined();

    w.child.kill('SIGINT');
    expect(await w.exited).toBe(0);
    serve.child.kill('SIGINT');
    await serve.exited;
  });
});
