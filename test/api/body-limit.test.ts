import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaClient, ServiceRequestError } from '../../engine/sdk/index.js';
import { startServeProcess, type ServeProcess } from './serve-process.js';

// Issue 21 / issue 13: a body over the 8 MiB JSON limit must get its 413 in the envelope,
// never a reset, whatever the client (contract.md §3: 413 PAYLOAD_TOO_LARGE). The server
// runs in its own process: in one process the client has written the whole body before the
// server reads a byte, and the reset never shows.
const dataDir = mkdtempSync(join(tmpdir(), 'schemasync-limit-'));
let server: ServeProcess;
const s = { base: '', ownerKey: '' };
beforeAll(async () => {
  server = await startServeProcess(dataDir);
  s.base = server.baseUrl;
  s.ownerKey = server.ownerKey;
  const made = await fetch(`${s.base}/schema/objects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.ownerKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'note', attributes: [{ name: 'body', type: 'text' }] }),
  });
  expect(made.status).toBe(201);
});
afterAll(() => {
  server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const NINE_MB = JSON.stringify({ body: 'x'.repeat(9 * 1024 * 1024) });
const TRIES = 50;

function viaNodeHttp(): Promise<string> {
  return new Promise((resolve) => {
    const req = request(new URL(`${s.base}/records/note`), {
      method: 'POST',
      headers: { authorization: `Bearer ${s.ownerKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(NINE_MB) },
    });
    req.once('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.once('end', () => {
        const body = JSON.parse(text) as { statusCode: number; code: string };
        resolve(`${res.statusCode} ${body.statusCode} ${body.code}`);
      });
      res.once('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code ?? err.message}`));
    });
    req.once('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code ?? err.message}`));
    req.end(NINE_MB);
  });
}

async function viaFetch(): Promise<string> {
  try {
    const res = await fetch(`${s.base}/records/note`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.ownerKey}`, 'content-type': 'application/json' },
      body: NINE_MB,
    });
    const body = (await res.json()) as { statusCode: number; code: string };
    return `${res.status} ${body.statusCode} ${body.code}`;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    return `error ${cause?.code ?? (err as Error).message}`;
  }
}

function tally(outcomes: string[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const o of outcomes) t[o] = (t[o] ?? 0) + 1;
  return t;
}

describe('an over-limit JSON body', () => {
  it(`gets 413 PAYLOAD_TOO_LARGE in the envelope, never a reset (node:http, ${TRIES} tries)`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < TRIES; i++) outcomes.push(await viaNodeHttp());
    expect(tally(outcomes)).toEqual({ '413 413 PAYLOAD_TOO_LARGE': TRIES });
  }, 60_000);

  it(`gets 413 PAYLOAD_TOO_LARGE in the envelope, never a reset (fetch, ${TRIES} tries)`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < TRIES; i++) outcomes.push(await viaFetch());
    expect(tally(outcomes)).toEqual({ '413 413 PAYLOAD_TOO_LARGE': TRIES });
  }, 60_000);

  it('the connection stays usable for requests sent after it (fetch)', async () => {
    expect(await viaFetch()).toBe('413 413 PAYLOAD_TOO_LARGE');
    const ok = await fetch(`${s.base}/records/note`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'small' }),
    });
    expect(ok.status).toBe(201);
  });

  it('the SDK reports the 413 and sends the body once, though a create may be retried', async () => {
    // The server logs one line per request it answered: count the 413s.
    const answered413 = (): number => server.stdout().split('\n').filter((l) => l.includes('"statusCode":413')).length;
    const before = answered413();
    const client = new SchemaClient({ baseUrl: s.base, apiKey: s.ownerKey, retries: 3, retryDelayMs: 1 });
    for (let i = 0; i < 10; i++) {
      // create sends an idempotency key of its own, so a reset would be retried (resent).
      const err = await client.records('note').create({ body: 'x'.repeat(9 * 1024 * 1024) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceRequestError);
      expect((err as ServiceRequestError).status).toBe(413);
      expect((err as ServiceRequestError).code).toBe('PAYLOAD_TOO_LARGE');
    }
    // The log line is written after the answer: wait for the last one to come through.
    for (let i = 0; i < 100 && answered413() < before + 10; i++) await new Promise((r) => setTimeout(r, 20));
    expect(answered413() - before).toBe(10);
  }, 60_000);
});
