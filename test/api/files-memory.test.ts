import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 5: a 100 MB upload with the server's memory staying flat. The server is the real
 * `schemasync serve` in its own process (built dist/), and its RSS is sampled from /proc
 * while the upload streams. Needs `npm run build`.
 */
const MB = 1024 * 1024;
const SIZE = 100 * MB;
let dir: string;
let child: ChildProcess;
let base: string;
let key: string;

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** 100 MB of deterministic, non-repeating-per-chunk bytes, produced lazily. */
async function* payload(hash: ReturnType<typeof createHash>, boundary: string): AsyncGenerator<Uint8Array> {
  yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const chunk = Buffer.alloc(MB);
  for (let i = 0; i < SIZE / MB; i++) {
    chunk.fill(i % 251);
    chunk.writeUInt32BE(i, 0);
    hash.update(chunk);
    yield Buffer.from(chunk);
  }
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}

beforeAll(async () => {
  const bin = join(import.meta.dirname, '..', '..', 'bin', 'schemasync');
  if (!existsSync(join(import.meta.dirname, '..', '..', 'dist', 'engine', 'store', 'sql', 'files-service.js'))) throw new Error('run npm run build first');
  dir = mkdtempSync(join(tmpdir(), 'ss-files-mem-'));
  // The real `schemasync serve` in its own process: SQLite store, blob folder, routes.
  child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--data', dir, '--no-rate-limit', '--quiet'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      if (l.includes('listening on')) resolve();
    });
    child.once('exit', (c) => reject(new Error(`schemasync serve exited ${c}`)));
  });
  const creds = JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')) as { baseUrl: string; apiKey: string };
  base = creds.baseUrl;
  key = creds.apiKey;
});
afterAll(() => {
  child?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

describe('a 100 MB upload', () => {
  it('streams to disk with the server RSS flat, and downloads byte-exact', async () => {
    // Warm up (JIT, first-request allocations) so the baseline is the steady state.
    const warm = new FormData();
    warm.append('file', new Blob([Buffer.alloc(2 * MB)]), 'warm.bin');
    expect((await fetch(`${base}/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: warm })).status).toBe(201);
    const baseline = rssOf(child.pid!);

    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(child.pid!))), 20);
    const hash = createHash('sha256');
    const boundary = 'memtestboundary';
    const res = await fetch(`${base}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: payload(hash, boundary) as unknown as RequestInit['body'],
      duplex: 'half',
    } as RequestInit);
    const body = (await res.json()) as { data: { id: string; size: number; sha256: string } };
    clearInterval(sampler);
    peak = Math.max(peak, rssOf(child.pid!));
    expect(res.status).toBe(201);
    expect(body.data.size).toBe(SIZE);
    const digest = hash.digest('hex');
    expect(body.data.sha256).toBe(digest);
    const growth = peak - baseline;
    console.log(`server RSS baseline ${(baseline / MB).toFixed(1)} MB, peak ${(peak / MB).toFixed(1)} MB, growth ${(growth / MB).toFixed(1)} MB`);
    // Holding the file would cost ≥ 100 MB; streaming costs a few buffers.
    expect(growth).toBeLessThan(50 * MB);

    const down = await fetch(`${base}/files/${body.data.id}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(down.headers.get('content-length')).toBe(String(SIZE));
    const back = createHash('sha256');
    let n = 0;
    for await (const c of down.body as unknown as AsyncIterable<Uint8Array>) {
      back.update(c);
      n += c.length;
    }
    expect(n).toBe(SIZE);
    expect(back.digest('hex')).toBe(digest);
  }, 120_000);
});
