import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';
import { BIN, cli, countOf, startCli } from './records-cli-helpers.js';

// `records import` under failure (issue 17): a killed import rerun writes no row twice, the
// server's refusals in skip mode, the bulk rate limit, and the progress bar on a terminal.
const cwd = mkdtempSync(join(tmpdir(), 'schemasync-records-import-'));
let s: TestServer;
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const ndjson = (n: number, from = 0) =>
  Array.from({ length: n }, (_v, i) => JSON.stringify({ n: from + i, label: `row ${from + i}`, at: '2024-05-01T00:00:00Z' })).join('\n') + '\n';

describe('rerun after a crash or Ctrl-C', () => {
  beforeAll(async () => {
    s = await startTestServer();
    await s.defineObject('item', [{ name: 'n', type: 'integer', unique: true }, { name: 'label', type: 'text' }, { name: 'at', type: 'datetime' }]);
    await s.defineObject('item2', [{ name: 'n', type: 'integer' }, { name: 'label', type: 'text' }, { name: 'at', type: 'datetime' }]);
  });
  afterAll(async () => s.close());

  it('a killed import, rerun, leaves every row exactly once (no unique index to hide duplicates)', async () => {
    const rows = 30_000;
    writeFileSync(join(cwd, 'big.ndjson'), ndjson(rows));
    for (const signal of ['SIGKILL', 'SIGINT'] as const) {
      const object = signal === 'SIGKILL' ? 'item2' : 'item';
      const { child, done } = startCli(s, ['records', 'import', object, 'big.ndjson', '--batch', '200'], { cwd });
      // Kill it once some batches have landed and before the last one has.
      let count = 0;
      for (let i = 0; i < 400 && (count = await countOf(s, object)) < 2_000; i++) await new Promise((r) => setTimeout(r, 25));
      child.kill(signal);
      const killed = await done;
      expect(killed.code === 0).toBe(false);
      const partial = await countOf(s, object);
      expect(partial).toBeGreaterThan(0);
      expect(partial).toBeLessThan(rows);

      const rerun = await cli(s, ['records', 'import', object, 'big.ndjson', '--batch', '200', '--json'], { cwd });
      expect(rerun.code, rerun.stderr).toBe(0);
      const summary = JSON.parse(rerun.stdout) as { imported: number; alreadyImported: number; refused: number };
      expect(summary.imported + summary.alreadyImported).toBe(rows);
      expect(summary.alreadyImported).toBeGreaterThanOrEqual(partial - 200);
      expect(rerun.stderr).toMatch(/batch 1 \(lines 1–200\) was imported by an earlier run; not written again/);
      expect(await countOf(s, object)).toBe(rows);
      // Each n once: the object without a unique index would show a doubled batch here.
      const ns = await s.call('POST', `/records/${object}/search`, { body: { filter: { n: { in: [0, 199, 200, rows - 1] } }, limit: 10 } });
      expect(ns.body.page.total).toBe(4);
    }
  }, 120_000);

  it('two imports of the same file at the same time write each row once (the server judges each key atomically)', async () => {
    await s.defineObject('twice', [{ name: 'n', type: 'integer' }, { name: 'label', type: 'text' }, { name: 'at', type: 'datetime' }]);
    writeFileSync(join(cwd, 'twice.ndjson'), ndjson(6_000));
    const runs = await Promise.all([1, 2].map(() => cli(s, ['records', 'import', 'twice', 'twice.ndjson', '--batch', '300', '--json'], { cwd })));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const sums = runs.map((r) => JSON.parse(r.stdout) as { imported: number; alreadyImported: number });
    expect(sums[0]!.imported + sums[1]!.imported).toBe(6_000);
    expect(sums[0]!.alreadyImported + sums[1]!.alreadyImported).toBe(6_000);
    expect(await countOf(s, 'twice')).toBe(6_000);
  }, 60_000);

  it('--on-error skip: rows the server refuses are reported by line and the rest written; a rerun writes nothing again', async () => {
    await s.defineObject('owner', [{ name: 'name', type: 'text' }]);
    await s.defineObject('task', [{ name: 'title', type: 'text' }, { name: 'code', type: 'text', unique: true }, { name: 'owner', type: 'relation', target: 'owner' }]);
    const o = await s.call('POST', '/records/owner', { body: { name: 'Ann' } });
    await s.call('POST', '/records/task', { body: { title: 't0', code: 'taken' } });
    const lines = [
      { title: 't1', owner: o.body.data.id },
      { title: 't2', owner: '00000000-0000-4000-8000-000000000000' },
      { title: 't3', code: 'taken' },
      { title: 't4' },
    ];
    writeFileSync(join(cwd, 'tasks.ndjson'), lines.map((l) => JSON.stringify(l)).join('\n'));
    const first = await cli(s, ['records', 'import', 'task', 'tasks.ndjson', '--on-error', 'skip'], { cwd });
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('line 2: owner names owner record that do not exist: 00000000-0000-4000-8000-000000000000');
    expect(first.stderr).toMatch(/line 3: code must be unique: record [0-9a-f-]+ already has this value/);
    expect(first.stdout).toMatch(/^imported 2 of 4 rows .*; 2 refused\.$/m);
    expect(await countOf(s, 'task')).toBe(3);

    const again = await cli(s, ['records', 'import', 'task', 'tasks.ndjson', '--on-error', 'skip'], { cwd });
    expect(again.stdout).toMatch(/^imported 0 of 4 rows .*; 2 already imported by an earlier run \(not written again\); 2 refused\.$/m);
    expect(await countOf(s, 'task')).toBe(3);

    // Stop (the default): the refused batch writes nothing; the summary says which lines are
    // imported. With two batches in flight, line 3 may be not yet read when line 2's refusal
    // comes back, read but not sent (waiting for a free slot), or sent and written (the order
    // test/api/records-import-pipeline.test.ts makes certain). Each summary must be the truth.
    writeFileSync(join(cwd, 'stop.ndjson'), [{ title: 's1' }, { title: 's2', owner: '00000000-0000-4000-8000-000000000000' }, { title: 's3' }].map((l) => JSON.stringify(l)).join('\n'));
    const stop = await cli(s, ['records', 'import', 'task', 'stop.ndjson', '--batch', '1'], { cwd });
    expect(stop.code).toBe(1);
    expect(stop.stderr).toContain('line 2: owner names owner record that do not exist');
    const said = /stopped at the first refused row \(--on-error stop\): (line 1 is imported; line 2 is not, nor is anything after line 2|line 1 is imported; lines 2–3 are not, nor is anything after line 3|lines 1 and 3 are imported; line 2 is not, nor is anything after line 3)\./.exec(stop.stdout);
    expect(said, stop.stdout).not.toBeNull();
    const third = said![1]!.startsWith('lines 1 and 3');
    expect(await countOf(s, 'task')).toBe(third ? 5 : 4);
    // The first row refused: nothing landed, and the summary says only that.
    writeFileSync(join(cwd, 'first.ndjson'), [{ title: 'f1', owner: '00000000-0000-4000-8000-000000000000' }, { title: 'f2' }].map((l) => JSON.stringify(l)).join('\n'));
    const none = await cli(s, ['records', 'import', 'task', 'first.ndjson'], { cwd });
    expect(none.code).toBe(1);
    expect(none.stdout).toContain('stopped at the first refused row (--on-error stop): nothing was imported. Fix the refused rows');
    expect(await countOf(s, 'task')).toBe(third ? 5 : 4);
    const titles = await s.call('POST', '/records/task/search', { body: { filter: { title: { in: ['s1', 's2', 's3'] } }, limit: 10 } });
    expect((titles.body.data as { values: { title: string } }[]).map((r) => r.values.title).sort()).toEqual(third ? ['s1', 's3'] : ['s1']);
  });
});

describe('the bulk rate limit', () => {
  it('on 429 the import waits, says so, and sends the same batch again', async () => {
    // Two bulk requests per window, and a clock 30× fast: a 2-second window.
    const srv = await startTestServer({ rateLimit: { limits: { bulk: 2 } }, now: () => Date.now() * 30 });
    try {
      await srv.defineObject('item', [{ name: 'n', type: 'integer' }, { name: 'label', type: 'text' }, { name: 'at', type: 'datetime' }]);
      writeFileSync(join(cwd, 'five.ndjson'), ndjson(50));
      const r = await cli(srv, ['records', 'import', 'item', 'five.ndjson', '--batch', '10'], { cwd });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/rate limit reached \(429 Too Many Requests; bulk writes: 10 a minute on the hosted service\): waiting 2 s, then sending batch \d \(lines \d+–\d+\) again/);
      expect(r.stdout).toMatch(/^imported 50 of 50 rows/m);
      expect(await countOf(srv, 'item')).toBe(50);
    } finally {
      await srv.close();
    }
  }, 60_000);
});

describe('the progress bar', () => {
  it('draws rows/s and ETA on a terminal, and nothing on a pipe', async () => {
    const srv = await startTestServer();
    try {
      await srv.defineObject('item', [{ name: 'n', type: 'integer' }, { name: 'label', type: 'text' }, { name: 'at', type: 'datetime' }]);
      writeFileSync(join(cwd, 'bar.ndjson'), ndjson(20_000));
      const args = [BIN, '--base-url', srv.base, '--api-key', srv.ownerKey, 'records', 'import', 'item', 'bar.ndjson', '--batch', '500'];
      const line = [process.execPath, ...args].map((a) => `'${a}'`).join(' ');
      const tty = await new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn('script', ['-qfec', line, '/dev/null'], { cwd, env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (b: Buffer) => (out += b.toString()));
        child.on('exit', (code) => resolve({ code, out }));
      });
      expect(tty.code, tty.out).toBe(0);
      expect(tty.out).toMatch(/\ritem \[[#.]{24}\] \d+% [\d,]+ rows [\d,]+ rows\/s ETA \d+:\d\d/);
      expect(tty.out).toMatch(/imported 20,000 of 20,000 rows/);

      const piped = await cli(srv, ['records', 'import', 'item', 'bar.ndjson', '--batch', '500'], { cwd });
      expect(piped.code).toBe(0);
      expect(piped.stderr).toMatch(/^(batch \d+ \(lines [\d–]+\) was imported by an earlier run; not written again\n)+$/);
      expect(piped.stderr).not.toContain('rows/s');
    } finally {
      await srv.close();
    }
  }, 60_000);
});
