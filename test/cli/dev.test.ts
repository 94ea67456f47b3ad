import { existsSync, mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/postgres-db.js';
import { api, atomicWrite, attributesOf, credentials, poll, runLines, start, tempProject, type Running } from './watch-helpers.js';

/**
 * `schemasync dev` end to end (issue 6): the real bin on a temp project, files edited for
 * real, the result read back over HTTP. Needs `npm run build` first.
 */
const deal = (attrs: Record<string, string>) =>
  `objects:\n  deal:\n    attributes:\n${Object.entries(attrs)
    .map(([n, t]) => `      ${n}: { type: ${t} }\n`)
    .join('')}`;

describe('schemasync dev', () => {
  let dir: string;
  let dev: Running;
  let baseUrl: string;
  let key: string;
  const file = () => join(dir, 'schema', 'deal.yaml');
  const attrs = () => attributesOf(baseUrl, key, 'deal');
  const until = (pred: (a: string[] | undefined) => boolean, what: string) =>
    poll(async () => {
      const a = await attrs();
      return pred(a) ? (a ?? []) : undefined;
    }, () => `${what}\nstdout:\n${dev.out()}\nstderr:\n${dev.err()}`);

  beforeAll(async () => {
    dir = tempProject({ 'deal.yaml': deal({ title: 'text' }) });
    dev = start(['dev', '--port', '0', '--no-rate-limit'], dir);
    const m = await dev.waitFor(/server on (http:\/\/\S+\/v1)/, 'the server banner');
    baseUrl = m[1]!;
    key = credentials(join(dir, '.schemasync')).apiKey;
    await dev.waitFor(/✓ synced crm v\d+/, 'the first sync');
  });

  afterAll(async () => {
    if (dev.child.exitCode === null) {
      dev.child.kill('SIGKILL');
      await dev.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts the server, writes credentials next to schemasync.yaml and syncs the declaration', async () => {
    expect(dev.out()).toMatch(/owner API key \(shown once\): \S+/);
    expect(await attrs()).toEqual(['title']);
  });

  it('applies a save', async () => {
    writeFileSync(file(), deal({ title: 'text', priority: 'integer' }));
    expect(await until((a) => a?.includes('priority') === true, 'priority to appear')).toEqual(['title', 'priority']);
    await dev.waitFor(/✓ synced crm v\d+: \+1 attribute/, 'the summary line');
  });

  it('applies an atomic save (temp file renamed over the declaration)', async () => {
    atomicWrite(file(), deal({ title: 'text', priority: 'integer', stage: 'text' }));
    await until((a) => a?.includes('stage') === true, 'stage to appear');
  });

  it('ends a burst of 20 saves in the last state, with no overlapping syncs', async () => {
    for (let i = 1; i <= 20; i++) {
      writeFileSync(file(), deal({ title: 'text', priority: 'integer', stage: 'text', [`note${i}`]: 'text' }));
    }
    const final = await until((a) => a?.includes('note20') === true, 'note20 to appear');
    expect(final).toEqual(['title', 'priority', 'stage', 'note20']);
    // Wait for the log to settle (every started run finished), then check the order.
    await poll(() => {
      const l = runLines(dev.out());
      return l.length > 0 && l.at(-1)?.what === 'finished' ? true : undefined;
    }, () => 'the last run to finish');
    const lines = runLines(dev.out());
    lines.forEach((l, i) => {
      expect(l.what).toBe(i % 2 === 0 ? 'started' : 'finished');
      expect(l.run).toBe(Math.floor(i / 2) + 1);
    });
  });

  it('reports a broken file with file:line:column, keeps watching, and resumes on the fix', async () => {
    writeFileSync(file(), deal({ title: 'text', priority: 'integr' }));
    await dev.waitFor(/schema\/deal\.yaml:5:\d+ error .*integr.*did you mean "integer"/, 'the located error');
    expect(dev.child.exitCode).toBe(null);
    writeFileSync(file(), deal({ title: 'text', priority: 'integer', fixed: 'boolean' }));
    await until((a) => a?.includes('fixed') === true, 'the fix to apply');
  });

  it('holds back a destructive edit, naming the step, its count and the command', async () => {
    const created = await api(baseUrl, key, 'POST', '/records/deal', { title: 'Big deal', priority: 1 });
    expect(created.status).toBe(201);
    writeFileSync(file(), deal({ title: 'text', fixed: 'boolean' })); // drops priority, which holds a value
    await dev.waitFor(/held back: 1 destructive step/, 'the held-back line');
    await dev.waitFor('schemasync sync --allow-destructive deal.priority', 'the command');
    expect(dev.out()).toMatch(/- deal\.priority: drop attribute \(1 affected\)/);
    expect(await attrs()).toContain('priority');
  });

  it('exits 0 on SIGINT', async () => {
    dev.child.kill('SIGINT');
    expect(await dev.exited).toBe(0);
    expect(dev.out()).toContain('SIGINT: stopping');
  });
});

describe('schemasync dev after credentials.json was deleted', () => {
  it('creates a new owner key, prints it once and says why, and syncs with it', async () => {
    const dir = tempProject({ 'deal.yaml': deal({ title: 'text' }) });
    try {
      const first = start(['dev', '--port', '0', '--no-rate-limit'], dir);
      try {
        await first.waitFor(/✓ synced crm v1/, 'the first sync');
      } finally {
        first.child.kill('SIGINT');
        expect(await first.exited).toBe(0);
      }
      const oldKey = credentials(join(dir, '.schemasync')).apiKey;
      unlinkSync(join(dir, '.schemasync', 'credentials.json'));

      const dev = start(['dev', '--port', '0', '--no-rate-limit'], dir);
      try {
        const key = (await dev.waitFor(/owner API key \(shown once\): (\S+)/, 'the new key'))[1]!;
        expect(dev.out()).toContain('warning: .schemasync/credentials.json was missing, so a new owner key was created');
        await dev.waitFor(/crm v1 is up to date/, 'the first sync, with the new key');
        const saved = credentials(join(dir, '.schemasync'));
        expect(saved.apiKey).toBe(key);
        expect(key).not.toBe(oldKey);
        expect(await attributesOf(saved.baseUrl, key, 'deal')).toEqual(['title']);
      } finally {
        dev.child.kill('SIGINT');
        expect(await dev.exited).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('schemasync dev --allow-destructive <targets>', () => {
  it('applies exactly the listed losses and still holds back the others', async () => {
    const dir = tempProject({ 'deal.yaml': deal({ title: 'text', amount: 'number', note: 'text' }) });
    const dev = start(['dev', '--port', '0', '--no-rate-limit', '--allow-destructive', 'deal.amount'], dir);
    try {
      const baseUrl = (await dev.waitFor(/server on (http:\/\/\S+\/v1)/, 'the server banner'))[1]!;
      await dev.waitFor(/✓ synced crm v1/, 'the first sync');
      const key = credentials(join(dir, '.schemasync')).apiKey;
      expect((await api(baseUrl, key, 'POST', '/records/deal', { title: 'A', amount: 5, note: 'n' })).status).toBe(201);

      writeFileSync(join(dir, 'schema', 'deal.yaml'), deal({ title: 'text', note: 'text' }));
      await poll(async () => ((await attributesOf(baseUrl, key, 'deal'))?.includes('amount') === false ? true : undefined), () => dev.out());
      await dev.waitFor(/✓ synced crm v2: -1 attribute/, 'the applied drop');

      writeFileSync(join(dir, 'schema', 'deal.yaml'), deal({ title: 'text' }));
      await dev.waitFor('--allow-destructive deal.note', 'the held-back note');
      expect(await attributesOf(baseUrl, key, 'deal')).toEqual(['title', 'note']);
    } finally {
      dev.child.kill('SIGINT');
      expect(await dev.exited).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('schemasync dev on another port and data folder than schemasync.yaml names', () => {
  it('warns at start, and the held-back command line works as printed', async () => {
    const dir = tempProject({ 'deal.yaml': deal({ title: 'text', priority: 'integer' }) });
    // schemasync.yaml points at another server (nothing listens there): without flags,
    // `schemasync sync` would go there, and would not find dev's key in devdata/.
    const elsewhere = 'http://127.0.0.1:1/v1';
    writeFileSync(join(dir, 'schemasync.yaml'), `source: crm\nschema: schema\nbaseUrl: ${elsewhere}\n`);
    const env = { SCHEMASYNC_BASE_URL: '', SCHEMASYNC_API_KEY: '' };
    const dev = start(['dev', '--port', '0', '--data', 'devdata', '--no-rate-limit'], dir, env);
    try {
      const baseUrl = (await dev.waitFor(/server on (http:\/\/\S+\/v1)/, 'the server banner'))[1]!;
      await dev.waitFor(/✓ synced crm v1/, 'the first sync');
      expect(dev.out()).toContain(`warning: schemasync.yaml's baseUrl is ${elsewhere}, not this server`);
      expect(dev.out()).toContain(`pass --base-url ${baseUrl} to reach dev`);
      const key = credentials(join(dir, 'devdata')).apiKey;
      expect((await api(baseUrl, key, 'POST', '/records/deal', { title: 'A', priority: 1 })).status).toBe(201);

      writeFileSync(join(dir, 'schema', 'deal.yaml'), deal({ title: 'text' }));
      const line = (await dev.waitFor(/to apply: (schemasync sync .*--allow-destructive deal\.priority)/, 'the held-back command'))[1]!;
      expect(line).toBe(`schemasync sync --base-url ${baseUrl} --data devdata --allow-destructive deal.priority`);
      expect(await attributesOf(baseUrl, key, 'deal')).toEqual(['title', 'priority']);

      // Run it exactly as printed, from the project folder, as a user would.
      const sync = start(line.split(' ').slice(1), dir, env);
      expect(await sync.exited, `stdout:\n${sync.out()}\nstderr:\n${sync.err()}`).toBe(0);
      expect(await attributesOf(baseUrl, key, 'deal')).toEqual(['title']);
    } finally {
      dev.child.kill('SIGINT');
      expect(await dev.exited).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// chokidar does not re-attach to a watched path that is removed and created again; these
// are `rm -rf schema && mkdir schema`, a checkout that empties the folder, an editor that
// deletes and rewrites schemasync.yaml.
describe('schemasync dev after the schema folder or schemasync.yaml is removed and created again', () => {
  it('keeps syncing later saves', async () => {
    const dir = tempProject({ 'deal.yaml': deal({ title: 'text' }) });
    mkdirSync(join(dir, 'more'));
    writeFileSync(join(dir, 'more', 'm.yaml'), 'objects:\n  mu:\n    attributes:\n      m: { type: text }\n');
    const dev = start(['dev', '--port', '0', '--no-rate-limit'], dir);
    try {
      const baseUrl = (await dev.waitFor(/server on (http:\/\/\S+\/v1)/, 'the server banner'))[1]!;
      await dev.waitFor(/✓ synced crm v\d+/, 'the first sync');
      const key = credentials(join(dir, '.schemasync')).apiKey;
      const until = (object: string, attr: string) =>
        poll(async () => ((await attributesOf(baseUrl, key, object))?.includes(attr) ? true : undefined), () => `${object}.${attr}\nstdout:\n${dev.out()}`);

      rmSync(join(dir, 'schema'), { recursive: true });
      await dev.waitFor(/No declaration files match/, 'the empty-folder error');
      mkdirSync(join(dir, 'schema'));
      writeFileSync(join(dir, 'schema', 'deal.yaml'), deal({ title: 'text', priority: 'integer' }));
      await until('deal', 'priority');
      writeFileSync(join(dir, 'schema', 'deal.yaml'), deal({ title: 'text', priority: 'integer', stage: 'text' }));
      await until('deal', 'stage');

      // Lines printed from here on only: earlier runs may have said the same.
      const after = (mark: number, pattern: RegExp, what: string) =>
        poll(() => (pattern.test(dev.out().slice(mark)) ? true : undefined), () => `${what}\nstdout:\n${dev.out()}`);
      const config = join(dir, 'schemasync.yaml');
      let mark = dev.out().length;
      unlinkSync(config);
      await after(mark, /File not found/, 'the missing-config error');
      mark = dev.out().length;
      writeFileSync(config, 'source: crm\nschema: schema\n');
      await after(mark, /· crm v\d+ is up to date/, 'the run after the config came back');
      writeFileSync(config, 'source: crm\nschema: [schema, more]\n');
      await until('mu', 'm');
    } finally {
      dev.child.kill('SIGINT');
      await dev.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('schemasync dev --database (contract.md §8)', () => {
  it('syncs the declaration into PostgreSQL and keeps syncing saves there', async () => {
    const db = await createTestDatabase('dev');
    const dir = tempProject({ 'deal.yaml': deal({ title: 'text' }) });
    const dev = start(['dev', '--port', '0', '--no-rate-limit', '--database', db.url], dir);
    try {
      const baseUrl = (await dev.waitFor(/server on (http:\/\/\S+\/v1)/, 'the server banner'))[1]!;
      await dev.waitFor(/✓ synced crm v1/, 'the first sync');
      const key = credentials(join(dir, '.schemasync')).apiKey;
      writeFileSync(join(dir, 'schema', 'deal.yaml'), deal({ title: 'text', priority: 'integer' }));
      await dev.waitFor(/✓ synced crm v2: \+1 attribute/, 'the save synced');
      expect(await attributesOf(baseUrl, key, 'deal')).toEqual(['title', 'priority']);
      // In the database, not in a SQLite file under the data folder.
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        const cols = await c.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'r_deal' AND column_name IN ('title', 'priority') ORDER BY column_name");
        expect(cols.rows.map((r: { column_name: string }) => r.column_name)).toEqual(['priority', 'title']);
      } finally {
        await c.end();
      }
      expect(existsSync(join(dir, '.schemasync', 'schemasync.db'))).toBe(false);
    } finally {
      dev.child.kill('SIGINT');
      expect(await dev.exited).toBe(0);
      rmSync(dir, { recursive: true, force: true });
      await db.drop();
    }
  });
});
