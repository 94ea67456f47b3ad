import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, api, attributesOf, start, tempProject, type Running } from './watch-helpers.js';

/**
 * plan / sync / pull end to end (issue 4 "CLI"): the real bin against a real local
 * server (`schemasync serve` in a child process). Needs `npm run build` first.
 */
const DEAL = `objects:
  deal:
    attributes:
      title: { type: text, required: true }
      amount: { type: integer }
`;

function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, encoding: 'utf8', input: '' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('plan, sync, pull against a local server', () => {
  let dir: string;
  let server: Running;
  let baseUrl: string;
  let key: string;

  beforeAll(async () => {
    dir = tempProject({ 'deal.yaml': DEAL });
    server = start(['serve', '--port', '0', '--no-rate-limit', '--data', join(dir, '.schemasync')], dir);
    const m = await server.waitFor(/(http:\/\/127\.0\.0\.1:\d+\/v1)/, 'the server banner');
    baseUrl = m[1]!;
    const creds = JSON.parse(readFileSync(join(dir, '.schemasync', 'credentials.json'), 'utf8')) as { apiKey: string };
    key = creds.apiKey;
  });

  afterAll(async () => {
    if (server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('no instance configured → exit 2 with a clear line', () => {
    const lone = mkdtempSync(join(tmpdir(), 'ss-none-'));
    writeFileSync(join(lone, 'schemasync.yaml'), 'source: crm\nschema: schema\n');
    const r = cli(['plan'], lone, { SCHEMASYNC_BASE_URL: '', SCHEMASYNC_API_KEY: '' });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/No instance configured/);
  });

  it('plan shows + steps and --detailed-exitcode 2; sync applies; plan is then empty with exit 0', () => {
    const p = cli(['plan', '--detailed-exitcode'], dir);
    expect(p.err).toBe('');
    expect(p.code).toBe(2);
    expect(p.out).toMatch(/\+ object deal \(2 attributes\)/);
    expect(p.out).toMatch(/Plan: 1 to create, 0 to change, 0 to drop\./);

    const s = cli(['sync'], dir);
    expect(s.code, s.err).toBe(0);
    expect(s.out).toMatch(/Applied: source crm is now at version 1/);

    const again = cli(['plan', '--detailed-exitcode'], dir);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/No changes/);
  });

  it('refuses a destructive sync with the code, the steps and the flag; --allow-destructive <target> applies it', async () => {
    await api(baseUrl, key, 'POST', '/records/deal', { title: 'a', amount: 5 });
    writeFileSync(join(dir, 'schema', 'deal.yaml'), DEAL.replace('      amount: { type: integer }\n', ''));
    const plan = cli(['plan'], dir);
    expect(plan.out).toMatch(/- deal\.amount \[destructive: 1 value\]/);

    const refused = cli(['sync', '--yes'], dir);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/Error: 500 SCHEMA_DESTRUCTIVE_NOT_ALLOWED/);
    expect(refused.err).toMatch(/deal\.amount: .*\(1 affected\)/);
    expect(refused.err).toMatch(/--allow-destructive deal\.amount/);

    const other = cli(['sync', '--allow-destructive', 'deal.title'], dir);
    expect(other.code).toBe(1);

    const ok = cli(['sync', '--allow-destructive', 'deal.amount'], dir);
    expect(ok.code, ok.err).toBe(0);
    expect(await attributesOf(baseUrl, key, 'deal')).not.toContain('amount');
  });

  it('a data conflict exits 1 with the code and the fix', async () => {
    await api(baseUrl, key, 'POST', '/records/deal', { title: 'b' });
    writeFileSync(join(dir, 'schema', 'deal.yaml'), `${DEAL.replace('      amount: { type: integer }\n', '')}      region: { type: text, required: true }\n`);
    const p = cli(['plan', '--detailed-exitcode'], dir);
    expect(p.code).toBe(1);
    expect(p.out).toMatch(/! SCHEMA_SYNC_CONFLICT deal\.region/);
    const s = cli(['sync', '--yes'], dir);
    expect(s.code).toBe(1);
    expect(s.err).toMatch(/Error: 409 SCHEMA_SYNC_CONFLICT/);
    expect(s.err).toMatch(/fix: give deal\.region a default/);
    writeFileSync(join(dir, 'schema', 'deal.yaml'), DEAL.replace('      amount: { type: integer }\n', ''));
  });

  it('--format json and github; --out then sync --plan applies only while the source is unchanged', () => {
    writeFileSync(join(dir, 'schema', 'deal.yaml'), `${DEAL.replace('      amount: { type: integer }\n', '')}      note: { type: text }\n`);
    const j = cli(['plan', '--format', 'json'], dir);
    const plan = JSON.parse(j.out) as { steps: { action: string; target: string }[]; baseVersion: number };
    expect(plan.steps).toEqual([expect.objectContaining({ action: 'add_attribute', target: 'deal.note' })]);
    const g = cli(['plan', '--format', 'github'], dir);
    expect(g.out).toMatch(/^::notice file=schema\/deal\.yaml,line=\d+,col=\d+,title=add_attribute::/m);

    const out = join(dir, 'plan.json');
    expect(cli(['plan', '--out', out], dir).code).toBe(0);
    // someone else moves the source on
    writeFileSync(join(dir, 'schema', 'deal.yaml'), `${DEAL.replace('      amount: { type: integer }\n', '')}      other: { type: text }\n`);
    expect(cli(['sync', '--yes'], dir).code).toBe(0);
    const stale = cli(['sync', '--plan', out], dir);
    expect(stale.code).toBe(1);
    expect(stale.err).toMatch(/changed since the plan was saved/);

    expect(cli(['plan', '--out', out], dir).code).toBe(0);
    const fresh = cli(['sync', '--plan', out], dir);
    expect(fresh.code, fresh.err).toBe(0);
  });

  it('--diff shows a unified diff of stored vs declared', () => {
    writeFileSync(join(dir, 'schema', 'deal.yaml'), `${DEAL.replace('      amount: { type: integer }\n', '')}      other: { type: text }\n      extra: { type: boolean }\n`);
    const d = cli(['plan', '--diff'], dir);
    expect(d.out).toMatch(/^\+\s+extra:/m);
    expect(d.out).toMatch(/^--- stored/m);
  });

  it('pull writes YAML that plans to zero changes', () => {
    expect(cli(['sync', '--yes'], dir).code).toBe(0);
    const target = join(dir, 'pulled');
    const r = cli(['pull', '--out', target], dir);
    expect(r.code, r.err).toBe(0);
    expect(readdirSync(target)).toEqual(['deal.yaml']);
    const clone = mkdtempSync(join(tmpdir(), 'ss-pulled-'));
    writeFileSync(join(clone, 'schemasync.yaml'), `source: crm\nschema: ${target}\nbaseUrl: ${baseUrl}\n`);
    const p = cli(['plan', '--detailed-exitcode'], clone, { SCHEMASYNC_API_KEY: key });
    expect(p.code, p.out + p.err).toBe(0);
  });
});
