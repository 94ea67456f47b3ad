import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';
import { startTestServer, type TestServer } from './helpers.js';

// `schemasync views` as a user runs it (the built bin, through the SDK) against a real server.
const cwd = mkdtempSync(join(tmpdir(), 'schemasync-views-cli-'));
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ logger: false });
  await s.defineObject('deal', [
    { name: 'title', type: 'text' },
    { name: 'stage', type: 'select', options: ['lead', 'won'] },
    { name: 'amount', type: 'number' },
  ]);
  const records = Array.from({ length: 7 }, (_, i) => ({ title: `d${i}`, stage: i % 2 ? 'won' : 'lead', amount: i * 10 }));
  await s.call('POST', '/records/deal/bulk-create', { body: { records } });
});
afterAll(async () => {
  await s.close();
  rmSync(cwd, { recursive: true, force: true });
});

const cli = (args: string[], key = s.ownerKey) => runCli(s.base, key, args, cwd);

describe('schemasync views', () => {
  it('put, list, get, run (one page, --all, --json) and delete', async () => {
    const put = await cli(['views', 'put', 'leads', '--object', 'deal', '--filter', '{"stage":"lead"}', '--sort', 'amount:desc', '--columns', 'title,amount']);
    expect(put.stderr).toBe('');
    expect(put.stdout).toBe('saved view leads (deal, runtime)\n');

    const list = await cli(['views', 'list']);
    expect(list.stdout).toMatch(/^NAME\s+OBJECT\s+OWNER\s+COLUMNS\nleads\s+deal\s+runtime\s+title,amount\n$/);

    const get = await cli(['views', 'get', 'leads']);
    expect(get.stdout).toContain('object: deal');
    expect(get.stdout).toContain('direction: desc');

    const page = await cli(['views', 'run', 'leads', '--limit', '2']);
    expect(page.code).toBe(0);
    const lines = page.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TITLE\s+AMOUNT$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(1))).toEqual([['d6', '60'], ['d4', '40']]);

    const all = await cli(['views', 'run', 'leads', '--limit', '2', '--all', '--json']);
    const rows = all.stdout.trim().split('\n').map((l) => JSON.parse(l) as { values: Record<string, unknown> });
    expect(rows.map((r) => r.values)).toEqual([60, 40, 20, 0].map((amount) => ({ title: `d${amount / 10}`, amount })));

    const del = await cli(['views', 'delete', 'leads']);
    expect(del.stdout).toBe('deleted view leads\n');
    const again = await cli(['views', 'run', 'leads']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Error: 404 SCHEMA_OBJECT_NOT_FOUND: No view named "leads"');
  });

  it('refusals are one error line and exit 1: a bad view names the near miss; bad flags are caught before any request', async () => {
    const bad = await cli(['views', 'put', 'v', '--object', 'deal', '--columns', 'titel']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^Error: 400 SCHEMA_VALIDATION_FAILED: .*did you mean "title"/m);
    const json = await cli(['views', 'put', 'v', '--object', 'deal', '--filter', '{stage:']);
    expect(json.code).toBe(1);
    expect(json.stderr).toContain('--filter is not valid JSON');
    const noObject = await cli(['views', 'put', 'v']);
    expect(noObject.stderr).toContain('views put needs the object it reads');
    const dir = await cli(['views', 'put', 'v', '--object', 'deal', '--sort', 'amount:down']);
    expect(dir.stderr).toContain('the direction must be asc or desc');
    expect((await s.call('GET', '/views')).body.data).toEqual([]);
  });
});
