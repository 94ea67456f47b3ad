import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

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
      if (m) resolve({ child, baseUrl: m[1]!, stdout: () => out, exit });
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
