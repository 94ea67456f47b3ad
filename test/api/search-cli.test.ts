import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaClient } from '../../engine/sdk/index.js';
import { startTestServer, type TestServer } from './helpers.js';
import { BIN, cli } from './records-cli-helpers.js';

// `schemasync search` (the built CLI as a child process), the SDK's search and
// globalSearch, and the index rebuilt on start when it is missing (issue 17).

let s: TestServer;
let cwd: string;
let acme: string;
beforeAll(async () => {
  s = await startTestServer();
  cwd = mkdtempSync(join(tmpdir(), 'schemasync-search-cli-'));
  await s.defineObject('company', [{ name: 'name', type: 'text' }]);
  await s.defineObject('person', [{ name: 'name', type: 'text' }]);
  acme = (await s.call('POST', '/records/company', { body: { name: 'Acme Rockets' } })).body.data.id;
  await s.call('POST', '/records/person', { body: { name: 'Wile E. Coyote, buys from Acme' } });
});
afterAll(async () => {
  await s.close();
  rmSync(cwd, { recursive: true, force: true });
});

describe('schemasync search', () => {
  it('prints a table of hits, best first', async () => {
    const r = await cli(s, ['search', 'acm'], { cwd });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^OBJECT\s+ID\s+ATTRIBUTE\s+SCORE\s+MATCH$/);
    expect(lines[1]).toMatch(new RegExp(`^company\\s+${acme}\\s+name\\s+[-\\d.e]+\\s+Acme Rockets$`));
    expect(lines[2]).toMatch(/^person\s/);
    expect(lines).toHaveLength(3);
  });

  it('--objects, --limit and --json', async () => {
    const r = await cli(s, ['search', 'acme', '--objects', 'person', '--limit', '5', '--json'], { cwd });
    expect(r.code).toBe(0);
    const hits = JSON.parse(r.stdout) as { object: string; snippet: string; highlights: [number, number][] }[];
    expect(hits.map((h) => h.object)).toEqual(['person']);
    const [a, b] = hits[0]!.highlights[0]!;
    expect(hits[0]!.snippet.slice(a, b)).toBe('Acme');
    const none = await cli(s, ['search', 'zzzz'], { cwd });
    expect(none.stdout).toBe('No matches.\n');
  });

  it('a blank query is the server\'s 400, as one error line and exit 1', async () => {
    const r = await cli(s, ['search', '  '], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: 400 SCHEMA_VALIDATION_FAILED: query: must contain a word to search for\n/);
    const bad = await cli(s, ['search', 'acme', '--limit', '500'], { cwd });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--limit must be a whole number from 1 to 100/);
  });
});

describe('SDK search and globalSearch', () => {
  it('answer the same hits as the routes', async () => {
    const client = new SchemaClient({ baseUrl: s.base, apiKey: s.ownerKey });
    const hits = await client.search({ query: 'acme', objects: ['company'] });
    expect(hits.map((h) => h.id)).toEqual([acme]);
    const all = await client.globalSearch('rockets', { limit: 5 });
    expect(all.map((h) => [h.object, h.id, h.attribute])).toEqual([['company', acme, 'name']]);
  });
});

describe('the index on start', () => {
  it('is rebuilt when missing, saying so, and left alone when current', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'schemasync-search-rebuild-'));
    try {
      const first = await serveOnce(dataDir, async (base, key) => {
        const made = await fetch(`${base}/schema/objects`, { method: 'POST', headers: headers(key), body: JSON.stringify({ name: 'note', attributes: [{ name: 'body', type: 'text' }] }) });
        expect(made.status).toBe(201);
        expect((await fetch(`${base}/records/note`, { method: 'POST', headers: headers(key), body: JSON.stringify({ body: 'Quixotic venture' }) })).status).toBe(201);
      });
      expect(first).not.toMatch(/search index/);

      // An older database: no index at all.
      const db = new Database(join(dataDir, 'schemasync.db'));
      const triggers = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE '_ss_search%'").all() as { name: string }[];
      for (const t of triggers) db.exec(`DROP TRIGGER "${t.name}"`);
      db.exec("DROP TABLE _ss_fts; DROP TABLE _ss_search; DELETE FROM _ss_meta WHERE key = 'search_layout'");
      db.close();

      const second = await serveOnce(dataDir, async (base, key) => {
        const r = await fetch(`${base}/global-search?q=quixo`, { headers: headers(key) });
        const hits = ((await r.json()) as { data: { object: string }[] }).data;
        expect(hits.map((h) => h.object)).toEqual(['note']);
      });
      expect(second).toContain('search index rebuilt (missing): 1 records in 1 objects');

      const third = await serveOnce(dataDir, async () => {});
      expect(third).not.toMatch(/search index/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

const headers = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

/** `schemasync serve` in a child process: run `use` against it, stop it, return its stderr. */
function serveOnce(dataDir: string, use: (base: string, key: string) => Promise<void>): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data', dataDir, '--no-rate-limit', '--no-studio'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    let started = false;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out.replace(/\x1b\[[0-9;]*m/g, ''));
      if (!m || started) return;
      started = true;
      const key = (JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { apiKey: string }).apiKey;
      use(m[1]!, key).then(
        () => {
          child.once('exit', () => resolve(err));
          child.kill('SIGTERM');
        },
        (e: unknown) => {
          child.kill('SIGKILL');
          reject(e);
        },
      );
    });
    child.once('exit', (code) => {
      if (!started) reject(new Error(`serve exited ${code}: ${err}`));
    });
  });
}
