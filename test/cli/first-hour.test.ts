import { clearOfMinuteEnd } from '../support/minute-window.js';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../api/helpers.js';
import { cli } from './plan-suite.js';
import { BIN, start, tempProject, type Running } from './watch-helpers.js';

/**
 * Issue 13's smaller CLI items, each against the real bin (built dist/) and, where an
 * instance is needed, a real `schemasync serve` on a free port. Needs `npm run build`.
 */
const DEAL = `objects:\n  deal:\n    attributes:\n      title: { type: text }\n      amount: { type: number }\n`;
const DOWN = 'http://127.0.0.1:1/v1';
const noInstance = { SCHEMASYNC_BASE_URL: '', SCHEMASYNC_API_KEY: '' };

async function stopAll(servers: Running[]): Promise<void> {
  for (const s of servers) {
    if (s.child.exitCode === null) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  }
}

describe('failures read as a person needs them', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempProject({ 'deal.yaml': DEAL });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an unreachable instance is `Error: could not connect to <base_url>`, not a status 0', async () => {
    for (const args of [['plan'], ['keys', 'list'], ['pull', '--out', join(dir, 'out')]]) {
      const r = await cli(['--base-url', DOWN, ...args], dir, noInstance);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.err.split('\n')[0]).toBe(`Error: could not connect to ${DOWN}`);
    }
  });

  it('a key the instance does not know gets a hint: where the URL came from, and the address the key\'s local server wrote', async () => {
    // Two local servers: schemasync.yaml names one, this folder's key belongs to another (`dev --port 4401`).
    const srv = await startTestServer({ logger: false });
    const project = tempProject({ 'deal.yaml': DEAL });
    try {
      writeFileSync(join(project, 'schemasync.yaml'), `source: crm\nschema: schema\nbaseUrl: ${srv.base}\n`);
      mkdirSync(join(project, '.schemasync'));
      const written = 'http://127.0.0.1:2/v1';
      writeFileSync(join(project, '.schemasync', 'credentials.json'), JSON.stringify({ baseUrl: written, apiKey: 'ssk_0123456789abcdef_not-a-key-of-this-server' }));
      const r = await cli(['records', 'list', 'deal'], project, noInstance);
      expect(r.code).toBe(1);
      expect(r.err.split('\n').slice(0, 2)).toEqual([
        'Error: 401 AUTH_INVALID_API_KEY: The API key is invalid or has been revoked',
        `  hint: The URL came from schemasync.yaml's baseUrl, but the local server whose key this is last started at ${written} (its credentials.json): pass --base-url ${written}, or set schemasync.yaml's baseUrl to it.`,
      ]);
    } finally {
      await srv.close();
      rmSync(project, { recursive: true, force: true });
    }
  });

  it('an unreachable instance gets a hint: where the URL came from, and the address a local server wrote when it differs', async () => {
    // A project whose schemasync.yaml names the default port while its local server last
    // started on another (`dev --port 4555` beside `baseUrl: …:4400`): the hint names that one.
    const project = tempProject({ 'deal.yaml': DEAL });
    try {
      writeFileSync(join(project, 'schemasync.yaml'), `source: crm\nschema: schema\nbaseUrl: ${DOWN}\n`);
      mkdirSync(join(project, '.schemasync'));
      const written = 'http://127.0.0.1:2/v1';
      writeFileSync(join(project, '.schemasync', 'credentials.json'), JSON.stringify({ baseUrl: written, apiKey: 'ssk_x_y' }));
      const r = await cli(['records', 'list', 'deal'], project, noInstance);
      expect(r.code).toBe(1);
      expect(r.err.split('\n')).toEqual([
        `Error: could not connect to ${DOWN}`,
        `  hint: The URL came from schemasync.yaml's baseUrl, but the local server here last started at ${written} (its credentials.json): pass --base-url ${written}, or set schemasync.yaml's baseUrl to it.`,
        '',
      ]);
      // The URL the credentials name, unreachable too: start the server.
      rmSync(join(project, 'schemasync.yaml'));
      writeFileSync(join(project, 'schemasync.yaml'), 'source: crm\nschema: schema\n');
      const fromCreds = await cli(['plan'], project, noInstance);
      expect(fromCreds.err).toContain(`Error: could not connect to ${written}\n  hint: The URL came from .schemasync/credentials.json. Start the local server with \`schemasync dev\``);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
    // A remote instance: no local advice.
    const remote = await cli(['keys', 'list'], dir, { ...noInstance, SCHEMASYNC_BASE_URL: 'http://schemasync.invalid/v1' });
    expect(remote.err).toContain('hint: The URL came from SCHEMASYNC_BASE_URL: check the address and that the instance is up.');
  });

  it('--format github prints an ::error:: line for a failure without a file', async () => {
    const down = await cli(['--base-url', DOWN, 'plan', '--format', 'github'], dir, noInstance);
    expect(down.code).toBe(1);
    expect(down.out).toContain(`::error::could not connect to ${DOWN}\n`);
    const missing = await cli(['--config', 'nope.yaml', 'validate', '--format', 'github'], dir, noInstance);
    expect(missing.code).toBe(1);
    expect(missing.out).toMatch(/^::error::.*nope\.yaml/m);
    const noFile = await cli(['--base-url', DOWN, '--config', 'nope.yaml', 'plan', '--format', 'github'], dir, noInstance);
    expect(noFile.out).toMatch(/^::error::No project file at nope\.yaml/m);
  });

  it('plan --detailed-exitcode exits 1 when no instance is configured (2 is only "changes pending")', async () => {
    const r = await cli(['plan', '--detailed-exitcode'], dir, noInstance);
    expect(r.err).toMatch(/^Error: No instance configured/);
    expect(r.code).toBe(1);
    // without the flag the contract's exit 2 for "no instance" stays
    expect((await cli(['plan'], dir, noInstance)).code).toBe(2);
  });
});

describe('against a local server', () => {
  let dir: string;
  let servers: Running[] = [];
  let baseUrl: string;
  let owner: string;

  const serve = async (extra: string[]): Promise<string> => {
    const s = start(['serve', '--port', '0', '--quiet', '--data', join(dir, `.data-${servers.length}`), ...extra], dir);
    servers.push(s);
    return (await s.waitFor(/(http:\/\/127\.0\.0\.1:\d+\/v1)/, 'the server banner'))[1]!;
  };
  const keyOf = (n: number): string => (JSON.parse(readFileSync(join(dir, `.data-${n}`, 'credentials.json'), 'utf8')) as { apiKey: string }).apiKey;
  const mint = async (role: string, scopes?: string): Promise<string> => {
    const r = await cli(['--json', 'keys', 'create', `k-${role}`, '--role', role, ...(scopes ? ['--scopes', scopes] : [])], dir, { SCHEMASYNC_BASE_URL: baseUrl, SCHEMASYNC_API_KEY: owner });
    expect(r.code, r.err).toBe(0);
    return (JSON.parse(r.out) as { secret: string }).secret;
  };

  beforeAll(async () => {
    dir = tempProject({ 'deal.yaml': DEAL });
    baseUrl = await serve(['--no-rate-limit']);
    owner = keyOf(0);
  });
  afterAll(async () => {
    await stopAll(servers);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a schema:read key plans; its sync is refused with a hint naming the role and scope it needs', async () => {
    const reader = await mint('member', 'schema:read');
    const env = { SCHEMASYNC_BASE_URL: baseUrl, SCHEMASYNC_API_KEY: reader };
    const plan = await cli(['plan', '--detailed-exitcode'], dir, env);
    expect(plan.err).toBe('');
    expect(plan.code).toBe(2);
    expect(plan.out).toContain('+ object deal');
    const sync = await cli(['sync', '--yes'], dir, env);
    expect(sync.code).toBe(1);
    expect(sync.err).toContain('Error: 403 SCHEMA_FORBIDDEN: You do not have permission to perform this action.\n');
    expect(sync.err).toMatch(/^ {2}hint: `schemasync sync` needs schema:write: a key with role owner or admin, and the schema:write scope/m);
  });

  it('a key without schema read is refused plan with a hint naming schema:read', async () => {
    const records = await mint('member', 'records:read');
    const plan = await cli(['plan'], dir, { SCHEMASYNC_BASE_URL: baseUrl, SCHEMASYNC_API_KEY: records });
    expect(plan.code).toBe(1);
    expect(plan.err).toMatch(/^ {2}hint: `schemasync plan` needs schema:read: a key with role owner, admin, member or viewer/m);
  });

  it('--allow-destructive with a target nobody declared is refused with a did-you-mean, nothing applied', async () => {
    const env = { SCHEMASYNC_BASE_URL: baseUrl, SCHEMASYNC_API_KEY: owner };
    const r = await cli(['sync', '--yes', '--allow-destructive', 'deal.amout'], dir, env);
    expect(r.code).toBe(1);
    expect(r.err).toContain('Error: --allow-destructive names "deal.amout"');
    expect(r.err).toContain('hint: "deal.amout": did you mean "deal.amount"?');
    const plan = await cli(['plan', '--detailed-exitcode'], dir, env);
    expect(plan.code).toBe(2); // still pending: the refused sync applied nothing
    const ok = await cli(['sync', '--yes', '--allow-destructive', 'deal.amount'], dir, env);
    expect(ok.code, ok.err).toBe(0);
  });

  it('dev with a mistyped --allow-destructive target: the held-back loss says which target matched nothing, and the near miss', async () => {
    const project = tempProject({ 'deal.yaml': DEAL });
    try {
      const dev = start(['dev', '--port', '0', '--no-rate-limit', '--allow-destructive', 'deal.amout'], project);
      servers.push(dev);
      await dev.waitFor(/synced crm v1/, 'the first sync');
      const creds = JSON.parse(readFileSync(join(project, '.schemasync', 'credentials.json'), 'utf8')) as { baseUrl: string; apiKey: string };
      const created = await fetch(`${creds.baseUrl}/records/deal`, {
        method: 'POST',
        headers: { authorization: `Bearer ${creds.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 't', amount: 5 }),
      });
      expect(created.status).toBe(201);
      writeFileSync(join(project, 'schema', 'deal.yaml'), DEAL.replace(/ {6}amount:.*\n/, ''));
      await dev.waitFor(/held back/, 'the held-back line');
      const m = await dev.waitFor(/^ *note: --allow-destructive names deal\.amout, .*$/m, 'the note');
      expect(m[0]).toContain('"deal.amout": did you mean "deal.amount"?');
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  it('a 429 from a local server hints --no-rate-limit', async () => {
    const limited = await serve([]);
    const key = keyOf(servers.length - 1);
    // the default bucket is 100 per client and minute (contract.md §3 "Rate limits")
    await clearOfMinuteEnd();
    let status = 0;
    for (let i = 0; i < 101 && status !== 429; i++) {
      status = (await fetch(`${limited}/keys`, { headers: { authorization: `Bearer ${key}` } })).status;
    }
    expect(status).toBe(429);
    const r = await cli(['keys', 'list'], dir, { SCHEMASYNC_BASE_URL: limited, SCHEMASYNC_API_KEY: key });
    expect(r.code).toBe(1);
    expect(r.err).toContain('Error: 429 ThrottlerException: Too Many Requests\n');
    expect(r.err).toMatch(/hint: .*--no-rate-limit/);
  });
});

describe('init and the data folder', () => {
  const dirs: string[] = [];
  const temp = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'ss-first-'));
    dirs.push(d);
    return d;
  };
  const run = (cwd: string, bin: string, ...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  const servers: Running[] = [];
  afterAll(async () => {
    await stopAll(servers);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('init writes a .gitignore covering the data folder, or adds to an existing one once', () => {
    const fresh = temp();
    const r = run(fresh, BIN, 'init');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('created .gitignore');
    expect(readFileSync(join(fresh, '.gitignore'), 'utf8')).toMatch(/^\.schemasync\/$/m);

    const mine = temp();
    writeFileSync(join(mine, '.gitignore'), 'node_modules/\ndist');
    expect(run(mine, BIN, 'init').stdout).toContain('updated .gitignore');
    expect(run(mine, BIN, 'init', '--force').stdout).not.toContain('.gitignore');
    const text = readFileSync(join(mine, '.gitignore'), 'utf8');
    expect(text.startsWith('node_modules/\ndist\n')).toBe(true);
    expect(text.match(/^\.schemasync\/$/gm)).toHaveLength(1);
    // git itself agrees
    spawnSync('git', ['init', '-q'], { cwd: mine });
    mkdirSync(join(mine, '.schemasync'));
    writeFileSync(join(mine, '.schemasync', 'credentials.json'), '{}');
    expect(spawnSync('git', ['check-ignore', '-q', '.schemasync/credentials.json'], { cwd: mine }).status).toBe(0);
  });

  it('init says `schemasync` when run by its own path, `npx schemasync` from a local install', () => {
    const direct = run(temp(), BIN, 'init');
    expect(direct.stdout).toContain('\nNext:\n  schemasync validate\n  schemasync dev\n');
    const project = temp();
    mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(BIN, join(project, 'node_modules', '.bin', 'schemasync'));
    const local = run(project, join(project, 'node_modules', '.bin', 'schemasync'), 'init');
    expect(local.status).toBe(0);
    expect(local.stdout).toContain('\nNext:\n  npx schemasync validate\n  npx schemasync dev\n');
  });

  it('serve warns once when its data folder is in a git work tree and not ignored; not when ignored or outside git', async () => {
    const banner = async (cwd: string): Promise<string> => {
      const s = start(['serve', '--port', '0', '--quiet', '--no-rate-limit'], cwd);
      servers.push(s);
      await s.waitFor(/saved with the base URL/, 'the banner');
      s.child.kill('SIGTERM');
      await s.exited;
      return s.out();
    };
    const repo = temp();
    spawnSync('git', ['init', '-q'], { cwd: repo });
    const warned = await banner(repo);
    expect(warned.match(/warning: \.schemasync holds the database and the owner key/g)).toHaveLength(1);
    writeFileSync(join(repo, '.gitignore'), '.schemasync/\n');
    rmSync(join(repo, '.schemasync'), { recursive: true });
    expect(await banner(repo)).not.toContain('git work tree');
    expect(await banner(temp())).not.toContain('git work tree');
  });

  it('dev warns the same way', async () => {
    const repo = tempProject({ 'deal.yaml': DEAL });
    dirs.push(repo);
    spawnSync('git', ['init', '-q'], { cwd: repo });
    const s = start(['dev', '--port', '0', '--no-rate-limit'], repo);
    servers.push(s);
    await s.waitFor(/synced crm/, 'the first sync');
    expect(s.out()).toMatch(/^warning: \.schemasync holds the database and the owner key .*add it to \.gitignore/m);
  });
});
