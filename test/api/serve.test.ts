import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../engine/store/index.js';
import { stalledRequest, within } from './helpers.js';

// `schemasync serve` as a user runs it: the real bin, a child process, real signals.
const bin = join(import.meta.dirname, '..', '..', 'bin', 'schemasync');
const dataDir = mkdtempSync(join(tmpdir(), 'schemasync-serve-'));
// A test that fails before its kill would leave its server running.
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

interface Running {
  child: ChildProcess;
  baseUrl: string;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function serve(args: string[] = [], data = dataDir): Promise<Running> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--data', data, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)[\s\S]*\ndata: .*\n/.exec(out.replace(/\x1b\[[0-9;]*m/g, ''));
      if (m) resolve({ child, baseUrl: m[1]!, stdout: () => out, stderr: () => err, exit });
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    void exit.then((code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

describe('schemasync serve', () => {
  it('first start creates an owner key, prints it once, writes credentials 0600, exits 0 on SIGINT', async () => {
    const s = await serve();
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { baseUrl: string; apiKey: string };
    expect(creds.baseUrl).toBe(s.baseUrl);
    expect(statSync(join(dataDir, 'credentials.json')).mode & 0o777).toBe(0o600);
    expect(s.stdout()).toContain(creds.apiKey);

    const health = await fetch(`${s.baseUrl}/health`);
    expect(health.status).toBe(200);
    const objects = await fetch(`${s.baseUrl}/schema/objects`, { headers: { authorization: `Bearer ${creds.apiKey}` } });
    expect(objects.status).toBe(200);
    const created = await fetch(`${s.baseUrl}/schema/objects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${creds.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'note', attributes: [{ name: 'body', type: 'text' }] }),
    });
    expect(created.status).toBe(201);
    // One JSON log line per request, carrying the request id.
    const id = created.headers.get('x-request-id')!;
    // The line is written after the answer is sent; wait for it to come through the pipe.
    const logged = () => s.stdout().split('\n').filter((l) => l.includes(id));
    for (let i = 0; i < 100 && logged().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const logLines = logged();
    expect(logLines).toHaveLength(1);
    expect(JSON.parse(logLines[0]!)).toMatchObject({ reqId: id, method: 'POST', url: '/v1/schema/objects', statusCode: 201 });

    s.child.kill('SIGINT');
    expect(await s.exit).toBe(0);
  });

  it('a second start keeps the data and the key and prints no new key; --quiet logs nothing', async () => {
    const before = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { apiKey: string };
    const s = await serve(['--quiet']);
    expect(s.stdout()).not.toContain('shown once');
    const after = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { baseUrl: string; apiKey: string };
    expect(after.apiKey).toBe(before.apiKey);
    expect(after.baseUrl).toBe(s.baseUrl);
    const r = await fetch(`${s.baseUrl}/schema/objects/note`, { headers: { 'x-api-key': after.apiKey } });
    expect(r.status).toBe(200);
    expect(s.stdout()).not.toContain('"reqId"');
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
  });

  it('a start after credentials.json was deleted creates a new owner key, prints it once and says why; the next start prints none', async () => {
    const path = join(dataDir, 'credentials.json');
    const old = JSON.parse(readFileSync(path, 'utf8')) as { apiKey: string };
    unlinkSync(path);
    const s = await serve(['--quiet']);
    const now = JSON.parse(readFileSync(path, 'utf8')) as { baseUrl: string; apiKey: string };
    expect(now.apiKey).not.toBe(old.apiKey);
    expect(now.baseUrl).toBe(s.baseUrl);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(s.stdout()).toContain('credentials.json was missing, so a new owner key was created');
    expect(s.stdout()).toContain(`owner API key (shown once): ${now.apiKey}`);
    // The new key works, and so does the old one (keys are not revoked behind the user's back).
    for (const key of [now.apiKey, old.apiKey]) {
      const r = await fetch(`${s.baseUrl}/schema/objects/note`, { headers: { authorization: `Bearer ${key}` } });
      expect(r.status).toBe(200);
    }
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);

    const again = await serve(['--quiet']);
    expect(again.stdout()).not.toContain('shown once');
    expect((await fetch(`${again.baseUrl}/health`)).status).toBe(200);
    expect(JSON.parse(readFileSync(path, 'utf8')).apiKey).toBe(now.apiKey);
    again.child.kill('SIGTERM');
    expect(await again.exit).toBe(0);
  });
});

describe('schemasync serve --cors (contract.md §3)', () => {
  const preflight = (base: string, origin: string) =>
    fetch(`${base}/records/note`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } });

  it('--cors <origins> answers preflights from those origins only; --cors * from any', async () => {
    const data = mkdtempSync(join(tmpdir(), 'schemasync-cors-'));
    try {
      const listed = await serve(['--quiet', '--cors', 'https://app.example.com,http://localhost:8080'], data);
      expect((await preflight(listed.baseUrl, 'https://app.example.com')).headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect((await preflight(listed.baseUrl, 'http://localhost:8080')).headers.get('access-control-allow-origin')).toBe('http://localhost:8080');
      expect((await preflight(listed.baseUrl, 'http://localhost:5173')).headers.get('access-control-allow-origin')).toBeNull();
      listed.child.kill('SIGINT');
      expect(await listed.exit).toBe(0);
      const any = await serve(['--quiet', '--cors', '*'], data);
      expect((await preflight(any.baseUrl, 'https://elsewhere.example')).headers.get('access-control-allow-origin')).toBe('*');
      any.child.kill('SIGINT');
      expect(await any.exit).toBe(0);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });

  it('a malformed origin is refused before listening, with a hint, exit 1', async () => {
    const r = await runToEnd(['serve', '--port', '0', '--data', dataDir, '--cors', 'https://app.example.com/']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--cors: "https:\/\/app.example.com\/" is not an origin/);
    expect(r.stderr).toContain("Pass --cors '*' to allow any origin.");
  });
});

describe('schemasync serve stopping with requests in flight', () => {
  const apiKey = (dir: string) => (JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')) as { apiKey: string }).apiKey;
  const waitFor = async (read: () => string, text: string) => {
    for (let i = 0; i < 500 && !read().includes(text); i++) await new Promise((r) => setTimeout(r, 20));
    expect(read()).toContain(text);
  };

  it('SIGTERM: a request that completes is answered, a stalled one is cut after the 10 s grace period; database closed, exit 0', async () => {
    const dir = join(dataDir, 'grace');
    const s = await serve([], dir);
    const finishing = stalledRequest(s.baseUrl, apiKey(dir), JSON.stringify({ name: 'finished', attributes: [{ name: 'a', type: 'text' }] }));
    const stalled = stalledRequest(s.baseUrl, apiKey(dir));
    await Promise.all([finishing.arrived, stalled.arrived]);
    s.child.kill('SIGTERM');
    await waitFor(s.stderr, 'SIGTERM: shutting down');
    // The stop has begun, and the requests in flight are still served: one of them completes.
    finishing.finish();
    expect(await finishing.outcome).toBe('answered 201');
    // The old stop waited for the stalled client until the 5-minute request timeout.
    expect(await within(s.exit, 25_000, 'serve to exit after SIGTERM')).toBe(0);
    expect(await stalled.outcome).toMatch(/^error /);
    // Closed, not killed: SQLite removes the write-ahead log when the last connection closes.
    expect(existsSync(join(dir, 'schemasync.db-wal'))).toBe(false);
  }, 40_000);

  it('a SIGTERM as soon as the banner is out still closes the database, exit 0 (handlers are installed before listening)', async () => {
    // A race window check: with the handlers installed after the banner (the old order) this
    // failed only some of the time (the process was killed by SIGTERM, database left open).
    const dir = join(dataDir, 'early');
    const s = await serve([], dir);
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
    expect(existsSync(join(dir, 'schemasync.db-wal'))).toBe(false);
  });

  it('a second SIGINT closes the stalled connection at once, still closing the database, exit 0', async () => {
    const dir = join(dataDir, 'force');
    const s = await serve([], dir);
    const stalled = stalledRequest(s.baseUrl, apiKey(dir));
    await stalled.arrived;
    s.child.kill('SIGINT');
    // The first one was handled (two signals sent at once may arrive as one).
    await waitFor(s.stderr, 'SIGINT: shutting down');
    s.child.kill('SIGINT');
    // Well before the 10 s grace period would end.
    expect(await within(s.exit, 8_000, 'serve to exit after a second SIGINT')).toBe(0);
    expect(s.stderr()).toContain('SIGINT: closing open connections now');
    expect(await stalled.outcome).toMatch(/^error /);
    expect(existsSync(join(dir, 'schemasync.db-wal'))).toBe(false);
  });
});

/** Runs the bin to its end (it is expected to fail at start-up), optionally as another user. */
function runToEnd(args: string[], as: { uid?: number; gid?: number } = {}, cwd?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' }, ...as, ...(cwd ? { cwd } : {}) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  return within(
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr }))),
    20_000,
    `schemasync ${args.join(' ')}`,
  ).finally(() => child.kill('SIGKILL'));
}

/**
 * Who the permission cases run as: this user, or when that is root (which ignores file
 * modes) the unprivileged `nobody` (uid 65534), provided it can run the bin from here.
 */
function unprivileged(): { as: { uid?: number; gid?: number }; skip: string | false } {
  if (process.getuid?.() !== 0) return { as: {}, skip: false };
  const as = { uid: 65534, gid: 65534 };
  const probe = spawnSync(process.execPath, [bin, '--version'], { ...as, encoding: 'utf8' });
  return probe.status === 0 ? { as, skip: false } : { as, skip: `running as root, and uid 65534 cannot run ${bin}: ${probe.stderr || probe.error}` };
}

describe('schemasync serve and dev on a data folder they cannot write', () => {
  const root = mkdtempSync(join(tmpdir(), 'schemasync-unwritable-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  chmodSync(root, 0o755); // another user must reach the folders below
  writeFileSync(join(root, 'file.txt'), 'not a folder');
  const underFile = join(root, 'file.txt', 'sub');

  it('serve: a path under a regular file (ENOTDIR, whoever runs it) names the folder, exit 1', async () => {
    const r = await runToEnd(['serve', '--port', '0', '--data', underFile]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Error: data folder ${underFile} is not writable (ENOTDIR: not a directory`);
  });

  it('dev: the same', async () => {
    const project = join(root, 'project');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'schemasync.yaml'), 'source: crm\nschema: schema\n');
    const r = await runToEnd(['dev', '--port', '0', '--data', underFile], {}, project);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Error: data folder ${underFile} is not writable (ENOTDIR: not a directory`);
  });

  it('serve and dev refuse a --port outside 0–65535 before opening anything, exit 1', async () => {
    for (const command of ['serve', 'dev']) {
      const r = await runToEnd([command, '--port', '70000', '--data', join(root, 'never')], {}, root);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('--port must be a whole number from 0 to 65535, got "70000"');
    }
    expect(existsSync(join(root, 'never'))).toBe(false);
  });

  const { as, skip } = unprivileged();
  if (skip) console.warn(`skipping the permission cases: ${skip}`);

  it.skipIf(skip)('a folder to create inside a read-only (0555) folder: the folder and EACCES, not "not allowed to listen"', async () => {
    const ro = join(root, 'ro');
    mkdirSync(ro, { mode: 0o555 });
    chmodSync(ro, 0o555);
    const r = await runToEnd(['serve', '--port', '0', '--data', join(ro, 'sub')], as);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Error: data folder ${join(ro, 'sub')} is not writable (EACCES: permission denied`);
    expect(r.stderr).not.toContain('listen');
  });

  it.skipIf(skip)('a read-only (0555) data folder: names it', async () => {
    const ro = join(root, 'ro-data');
    mkdirSync(ro, { mode: 0o555 });
    chmodSync(ro, 0o555);
    const r = await runToEnd(['serve', '--port', '0', '--data', ro], as);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Error: data folder ${ro} is not writable (`);
  });

  it.skipIf(skip)('a read-only database file: names the folder and the file', async () => {
    const dir = join(root, 'ro-db');
    mkdirSync(dir);
    openStore({ path: join(dir, 'schemasync.db') }).close();
    chmodSync(join(dir, 'schemasync.db'), 0o444);
    chmodSync(dir, 0o777); // the folder is writable: only the database file is not
    const r = await runToEnd(['serve', '--port', '0', '--data', dir], as);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Error: data folder ${dir} is not writable (schemasync.db: attempt to write a readonly database)`);
  });
});
