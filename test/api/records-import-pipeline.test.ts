import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';
import { cli, countOf } from './records-cli-helpers.js';

// `records import` keeps two batches in flight (cli/records/importer.ts): a batch the server
// refuses can sit between written ones. The store must hold exactly the lines the CLI says it
// wrote, and a rerun of the fixed file must write each row once — every batch's idempotency
// key depends on that batch alone, not on the batches before it.
//
// The order in which the server sees the batches is made certain by a relay between the CLI
// and the real server: it holds the batch with the bad row until the next batch has been
// answered, and that next-but-one batch until the bad batch's refusal has gone back.

const cwd = mkdtempSync(join(tmpdir(), 'schemasync-import-pipeline-'));
const MISSING = '00000000-0000-4000-8000-000000000000';
let s: TestServer;
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** Line i+1 of the file is row n = i; `bad` rows name an owner that does not exist. */
const file = (rows: number, bad: number[]) =>
  Array.from({ length: rows }, (_v, i) => JSON.stringify(bad.includes(i) ? { n: i, owner: MISSING } : { n: i })).join('\n') + '\n';

interface Hold {
  /** Requests whose body has this text wait … */
  body: string;
  /** … until a request whose body has this text has been answered (or 5 s, then go on) … */
  until: string;
  /** … and, if given, a request whose body has this text has arrived (or 5 s). */
  received?: string;
}

/** An HTTP relay to `target` that delays requests per `holds`; everything else passes as is. */
async function relay(target: string, holds: Hold[]): Promise<{ base: string; close: () => Promise<void> }> {
  const answered = new Map<string, () => void>();
  const waits = new Map<string, Promise<void>>();
  const arrived = new Map<string, () => void>();
  const arrivals = new Map<string, Promise<void>>();
  for (const h of holds) {
    waits.set(h.until, new Promise<void>((r) => answered.set(h.until, r)));
    if (h.received !== undefined) arrivals.set(h.received, new Promise<void>((r) => arrived.set(h.received!, r)));
  }
  const readAll = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      const text = body.toString('utf8');
      for (const [marker, release] of arrived) if (text.includes(marker)) release();
      for (const h of holds) {
        if (!text.includes(h.body)) continue;
        const gates = [waits.get(h.until), ...(h.received === undefined ? [] : [arrivals.get(h.received)])];
        await Promise.race([Promise.all(gates), new Promise((r) => setTimeout(r, 5_000))]);
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !['host', 'connection', 'content-length', 'transfer-encoding'].includes(k)) headers[k] = v;
      const up = await fetch(`${target}${req.url!.replace(/^\/v1/, '')}`, { method: req.method!, headers, ...(body.length > 0 ? { body } : {}) });
      const out = Buffer.from(await up.arrayBuffer());
      const back: Record<string, string> = {};
      up.headers.forEach((v, k) => {
        if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive'].includes(k)) back[k] = v;
      });
      res.writeHead(up.status, { ...back, 'content-length': String(out.length) });
      res.end(out, () => {
        for (const [until, release] of answered) if (text.includes(until)) release();
      });
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}/v1`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** How many records of `object` have n in [from, to]. */
async function countBetween(object: string, from: number, to: number): Promise<number> {
  const r = await s.call('POST', `/records/${object}/search`, { body: { filter: { and: [{ n: { gte: from } }, { n: { lte: to } }] }, limit: 1 } });
  return r.body.page.total as number;
}

describe('records import with batches in flight', () => {
  beforeAll(async () => {
    s = await startTestServer();
    await s.defineObject('owner', [{ name: 'name', type: 'text' }]);
  });
  afterAll(async () => s.close());

  it('a refused row in batch 3 of 7 while batch 4 is written: the store holds exactly the lines the CLI names, and the rerun of the fixed file writes each row once', async () => {
    writeFileSync(join(cwd, 'ledger.ndjson'), file(700, [249]));
    for (const format of ['json', 'text'] as const) {
      const object = `ledger_${format}`;
      // No unique index: a batch written twice would show as extra records.
      await s.defineObject(object, [{ name: 'n', type: 'integer' }, { name: 'owner', type: 'relation', target: 'owner' }]);
      // Batch 3 (rows 200–299, the bad row 249) waits until batch 4 (300–399) is answered and
      // batch 5 (400–499), which the CLI sends once batch 4's answer frees a place, has arrived;
      // batch 5 waits until batch 3's refusal has gone back. So batches 4 and 5 are written, 3
      // is refused, and 6 is read but never sent. (Without waiting for batch 5, batch 3's refusal
      // could reach a loaded CLI before it sent batch 5, which it then never sends.)
      const r = await relay(s.base, [
        { body: '{"n":249,', until: '{"n":300}', received: '{"n":400}' },
        { body: '{"n":400}', until: '{"n":249,' },
      ]);
      try {
        const args = ['records', 'import', object, 'ledger.ndjson', '--batch', '100', ...(format === 'json' ? ['--json'] : [])];
        const first = await cli({ ...s, base: r.base }, args, { cwd });
        expect(first.code, first.stderr).toBe(1);
        expect(first.stderr).toContain(`line 250: owner names owner record that do not exist: ${MISSING}`);
        if (format === 'json') {
          expect(JSON.parse(first.stdout)).toMatchObject({ imported: 400, refused: 1, stopped: true, lastImportedLine: 500, written: [[1, 200], [301, 500]] });
        } else {
          expect(first.stdout).toContain('imported 400 of 600 rows of ledger.ndjson');
          expect(first.stdout).toContain('stopped at the first refused row (--on-error stop): lines 1–200 and 301–500 are imported; lines 201–300 and 501–600 are not, nor is anything after line 600.');
        }
      } finally {
        await r.close();
      }
      // What the CLI said is what the store holds (n = line - 1).
      expect(await countOf(s, object)).toBe(400);
      expect(await countBetween(object, 0, 199)).toBe(200);
      expect(await countBetween(object, 200, 299)).toBe(0);
      expect(await countBetween(object, 300, 499)).toBe(200);
      expect(await countBetween(object, 500, 699)).toBe(0);
    }

    // The row fixed in place (the owner dropped): batches 1, 2, 4, 5 are replayed, 3, 6, 7 written.
    writeFileSync(join(cwd, 'ledger.ndjson'), file(700, []));
    const rerun = await cli(s, ['records', 'import', 'ledger_json', 'ledger.ndjson', '--batch', '100', '--json'], { cwd });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ imported: 300, alreadyImported: 400, refused: 0, written: [[1, 700]] });
    expect(rerun.stderr).toContain('batch 4 (lines 301–400) was imported by an earlier run; not written again');
    expect(await countOf(s, 'ledger_json')).toBe(700);
    for (let from = 0; from < 700; from += 100) expect(await countBetween('ledger_json', from, from + 99)).toBe(100);
  }, 60_000);
});
