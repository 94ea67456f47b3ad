import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// Two `schemasync serve` processes on one data folder (contract.md §8: processes sharing
// the data behave as one service). Needs `npm run build`: the bin loads dist/.
const bin = join(import.meta.dirname, '..', '..', 'bin', 'schemasync');
const dataDir = mkdtempSync(join(tmpdir(), 'schemasync-revoke-'));
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

function serve(): Promise<string> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--data', dataDir, '--quiet', '--no-rate-limit'], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out.replace(/\x1b\[[0-9;]*m/g, ''));
      if (m) resolve(m[1]!);
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

const call = (base: string, key: string, method: string, path: string, body?: unknown) =>
  fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('key revocation across processes sharing a data folder', () => {
  it('a key revoked through one process is refused by the other on its very next request', async () => {
    const a = await serve();
    const b = await serve();
    const owner = (JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { apiKey: string }).apiKey;
    for (let round = 0; round < 5; round++) {
      const made = await call(a, owner, 'POST', '/keys', { name: `member ${round}`, role: 'member' });
      expect(made.status).toBe(201);
      const { id, secret } = ((await made.json()) as { data: { id: string; secret: string } }).data;
      // B has seen the key work (and may remember that).
      expect((await call(b, secret, 'GET', '/schema/objects')).status).toBe(200);
      expect((await call(b, secret, 'GET', '/schema/objects')).status).toBe(200);
      const revoked = await call(a, owner, 'DELETE', `/keys/${id}`);
      expect(revoked.status).toBe(200);
      const after = await call(b, secret, 'GET', '/schema/objects');
      expect(after.status).toBe(401);
      expect(((await after.json()) as { code: string }).code).toBe('AUTH_INVALID_API_KEY');
    }
    // Keys that were not revoked keep working on both.
    expect((await call(b, owner, 'GET', '/schema/objects')).status).toBe(200);
    expect((await call(a, owner, 'GET', '/schema/objects')).status).toBe(200);
  }, 30_000);
});
