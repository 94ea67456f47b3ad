import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServeProcess, type ServeProcess } from './serve-process.js';

// Two `schemasync serve` processes on one data folder (contract.md §8: processes sharing
// the data behave as one service). Needs `npm run build`: the bin loads dist/.
const dataDir = mkdtempSync(join(tmpdir(), 'schemasync-revoke-'));
const servers: ServeProcess[] = [];
afterAll(() => {
  for (const s of servers) s.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function serve(): Promise<ServeProcess> {
  const s = await startServeProcess(dataDir, ['--quiet']);
  servers.push(s);
  return s;
}

const call = (base: string, key: string, method: string, path: string, body?: unknown) =>
  fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('key revocation across processes sharing a data folder', () => {
  it('a key revoked through one process is refused by the other on its very next request', async () => {
    const { baseUrl: a, ownerKey: owner } = await serve();
    const { baseUrl: b } = await serve();
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
