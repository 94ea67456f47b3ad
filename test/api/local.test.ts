import { request, type ClientRequest } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASE_FILE, DataFolderError, readCredentials, startLocalServer } from '../../engine/server/local.js';
import { openStore } from '../../engine/store/index.js';
import type { Store } from '../../engine/store/types.js';
import { stalledRequest, within } from './helpers.js';

/** A look at the server's database through a connection of its own (as another command would open it). */
async function withStore<T>(dataDir: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore({ path: join(dataDir, DATABASE_FILE) });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

// engine/server/local.ts, the part `serve` and `dev` share: first-start key and credentials.
const dataDir = join(mkdtempSync(join(tmpdir(), 'schemasync-local-')), 'nested', '.schemasync');
afterAll(() => rmSync(join(dataDir, '..', '..'), { recursive: true, force: true }));

describe('startLocalServer', () => {
  const opts = { dataDir, port: 0, rateLimit: false };

  it('creates the data folder, an owner key on first start, and credentials.json mode 0600', async () => {
    const server = await startLocalServer(opts);
    try {
      expect(server.createdKey).toEqual(expect.any(String));
      const creds = readCredentials(dataDir)!;
      expect(creds).toEqual({ baseUrl: server.baseUrl, apiKey: server.createdKey });
      expect(statSync(server.credentialsPath).mode & 0o777).toBe(0o600);
      expect(server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const r = await fetch(`${server.baseUrl}/schema/objects`, { headers: { authorization: `Bearer ${creds.apiKey}` } });
      expect(r.status).toBe(200);
      expect((await withStore(dataDir, (store) => store.listKeys())).filter((k) => k.role === 'owner')).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('a later start creates no key and repoints the saved credentials at the new port', async () => {
    const first = readCredentials(dataDir)!;
    const server = await startLocalServer(opts);
    try {
      expect(server.createdKey).toBeNull();
      const creds = JSON.parse(readFileSync(server.credentialsPath, 'utf8')) as { baseUrl: string; apiKey: string };
      expect(creds.apiKey).toBe(first.apiKey);
      expect(creds.baseUrl).toBe(server.baseUrl);
      expect(await withStore(dataDir, (store) => store.listKeys())).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('close lets an in-flight request finish', async () => {
    const server = await startLocalServer(opts);
    const apiKey = readCredentials(dataDir)!.apiKey;
    const body = JSON.stringify({ name: 'late', role: 'viewer' });
    const arrived = new Promise((resolve) => server.app.server.once('request', resolve));
    const url = new URL(`${server.baseUrl}/keys`);
    let req!: ClientRequest;
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      req = request(
        url,
        { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
    });
    // Half the body is sent, so the request is in flight when the server is told to close.
    req.write(body.slice(0, 10));
    await arrived;
    const closing = server.close();
    req.end(body.slice(10));
    const r = await answered;
    await closing;
    expect(r.status).toBe(201);
    expect(JSON.parse(r.text).data.name).toBe('late');
  });
});

describe('startLocalServer without credentials.json', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'schemasync-local-')), 'data');
  afterAll(() => rmSync(join(dir, '..'), { recursive: true, force: true }));
  const opts = { dataDir: dir, port: 0, rateLimit: false };

  it('keys exist but credentials.json is gone: a fresh owner key, written 0600; the old keys still work', async () => {
    const first = await startLocalServer(opts);
    await first.close();
    const oldKey = first.createdKey!;
    unlinkSync(first.credentialsPath);

    const server = await startLocalServer(opts);
    try {
      expect(server.createdKey).toEqual(expect.any(String));
      expect(server.createdKey).not.toBe(oldKey);
      expect(server.createdKeyReason).toBe('credentials-missing');
      expect(readCredentials(dir)).toEqual({ baseUrl: server.baseUrl, apiKey: server.createdKey });
      expect(statSync(server.credentialsPath).mode & 0o777).toBe(0o600);
      for (const key of [server.createdKey!, oldKey]) {
        const r = await fetch(`${server.baseUrl}/schema/objects`, { headers: { authorization: `Bearer ${key}` } });
        expect(r.status).toBe(200);
      }
      expect((await withStore(dir, (store) => store.listKeys())).filter((k) => k.role === 'owner')).toHaveLength(2);
    } finally {
      await server.close();
    }
    // A normal restart creates nothing.
    const again = await startLocalServer(opts);
    await again.close();
    expect(again.createdKey).toBeNull();
    expect(again.createdKeyReason).toBeNull();
  });

  it('an unreadable credentials.json is replaced the same way, and says so', async () => {
    writeFileSync(join(dir, 'credentials.json'), '{ not json', { mode: 0o600 });
    const server = await startLocalServer(opts);
    await server.close();
    expect(server.createdKeyReason).toBe('credentials-unreadable');
    expect(readCredentials(dir)?.apiKey).toBe(server.createdKey);
  });

  it('a credentials.json whose key was revoked is replaced the same way, and says so', async () => {
    const saved = readCredentials(dir)!;
    await withStore(dir, async (store) => {
      const savedActor = await store.authenticate(saved.apiKey);
      const savedId = (await store.listKeys()).find((k) => savedActor?.keyId === k.id)!.id;
      await store.revokeKey(savedId);
    });
    const server = await startLocalServer(opts);
    await server.close();
    expect(server.createdKeyReason).toBe('credentials-revoked');
    expect(readCredentials(dir)?.apiKey).toBe(server.createdKey);
    expect(await withStore(dir, (store) => store.authenticate(server.createdKey!))).not.toBeNull();
  });
});

describe('startLocalServer stopping', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'schemasync-local-')), 'data');
  afterAll(() => rmSync(join(dir, '..'), { recursive: true, force: true }));
  // SQLite removes the write-ahead log when the last connection to the database closes: the
  // server's store is closed exactly when the file is gone (nothing else opens this database).
  const storeOpen = () => existsSync(join(dir, `${DATABASE_FILE}-wal`));

  it('close cuts a stalled request once the grace period is over, then closes the store', async () => {
    const server = await startLocalServer({ dataDir: dir, port: 0, rateLimit: false, shutdownGraceMs: 300 });
    const stalled = stalledRequest(server.baseUrl, server.createdKey ?? readCredentials(dir)!.apiKey);
    await stalled.arrived;
    expect(storeOpen()).toBe(true);
    await within(server.close(), 10_000, 'close() with a stalled request');
    expect(storeOpen()).toBe(false);
    expect(await stalled.outcome).toMatch(/^error /);
  });

  it('closeNow cuts it at once, whatever the grace period', async () => {
    const server = await startLocalServer({ dataDir: dir, port: 0, rateLimit: false, shutdownGraceMs: 600_000 });
    const stalled = stalledRequest(server.baseUrl, readCredentials(dir)!.apiKey);
    await stalled.arrived;
    expect(storeOpen()).toBe(true);
    const closing = server.close();
    await within(server.closeNow(), 10_000, 'closeNow() with a stalled request');
    await closing;
    expect(storeOpen()).toBe(false);
    expect(await stalled.outcome).toMatch(/^error /);
  });
});

describe('startLocalServer on a data folder it cannot write', () => {
  const root = mkdtempSync(join(tmpdir(), 'schemasync-local-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('names the folder and the reason (a path under a regular file: ENOTDIR, whoever runs it)', async () => {
    writeFileSync(join(root, 'file.txt'), 'not a folder');
    const dataDir = join(root, 'file.txt', 'sub');
    const err = await startLocalServer({ dataDir, port: 0 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DataFolderError);
    expect((err as Error).message).toContain(`data folder ${dataDir} is not writable (ENOTDIR: not a directory`);
  });
});
