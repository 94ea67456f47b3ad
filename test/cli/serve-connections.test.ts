import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/postgres-db.js';

/**
 * `serve --database-connections <n>` (and env SCHEMASYNC_DATABASE_CONNECTIONS): the most
 * PostgreSQL connections one process opens, both of its pools together — what a team sizes
 * against max_connections or a pooler. A real serve process on the run's cluster under
 * concurrent clients, its connections counted in pg_stat_activity while they run.
 */
const bin = join(import.meta.dirname, '..', '..', 'bin', 'schemasync');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'schemasync-conns-'));
  dirs.push(d);
  return d;
};

interface Serve {
  data: string;
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function serve(args: string[], env: Record<string, string | undefined> = {}): Serve {
  const data = tempDir();
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--data', data, '--no-studio', '--quiet', '--no-rate-limit', ...args], {
    cwd: data,
    env: { ...process.env, SCHEMASYNC_DATABASE_URL: undefined, SCHEMASYNC_DATABASE_CONNECTIONS: undefined, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = once(child, 'close').then(([code]) => code as number | null);
  return { data, child, stdout: () => out, stderr: () => err, exited };
}

async function listening(s: Serve): Promise<{ baseUrl: string; apiKey: string }> {
  for (let i = 0; i < 400; i++) {
    const m = /listening on (http:\/\/\S+\/v1)/.exec(s.stdout());
    // The banner is written once the owner key is saved (credentials.json, contract.md §4).
    if (m) return { baseUrl: m[1]!, apiKey: (JSON.parse(readFileSync(join(s.data, 'credentials.json'), 'utf8')) as { apiKey: string }).apiKey };
    if (s.child.exitCode !== null) throw new Error(`serve exited: ${s.stderr()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`serve did not start: ${s.stdout()} ${s.stderr()}`);
}

/**
 * Runs `work` while counting the server's connections to `database` every few milliseconds;
 * resolves with the most seen at once.
 */
async function peakConnections(adminUrl: string, database: string, work: () => Promise<void>): Promise<number> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  let peak = 0;
  let done = false;
  const watch = (async () => {
    while (!done) {
      const r = await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'schemasync'", [database]);
      peak = Math.max(peak, r.rows[0].n as number);
      await new Promise((res) => setTimeout(res, 3));
    }
  })();
  try {
    await work();
  } finally {
    done = true;
    await watch;
    await c.end();
  }
  return peak;
}

/** 60 requests at once: single creates (the lone-statement pool), bulk creates and searches (the main one). */
async function busy(baseUrl: string, apiKey: string): Promise<void> {
  const call = async (method: string, path: string, body?: unknown): Promise<void> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  await call('POST', '/schema/objects', { name: 'deal', attributes: [{ name: 'title', type: 'text' }, { name: 'amount', type: 'number' }] });
  await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0
        ? call('POST', '/records/deal', { title: `deal ${i}`, amount: i })
        : i % 3 === 1
          ? call('POST', '/records/deal/bulk-create', { records: Array.from({ length: 50 }, (_, j) => ({ title: `bulk ${i}.${j}`, amount: j })) })
          : call('POST', '/records/deal/search', { limit: 20 }),
    ),
  );
}

describe('serve --database-connections (PostgreSQL)', () => {
  it('holds the process to n connections under concurrent clients, and a larger n opens more', async () => {
    const runWith = async (n: number): Promise<{ peak: number; banner: string; rows: number }> => {
      const db = await createTestDatabase('conns');
      const s = serve(['--database', db.url, '--database-connections', String(n)]);
      try {
        const { baseUrl, apiKey } = await listening(s);
        const admin = new URL(db.url);
        admin.pathname = '/postgres';
        const peak = await peakConnections(admin.toString(), db.name, () => busy(baseUrl, apiKey));
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        const rows = (await c.query('SELECT count(*)::int AS n FROM r_deal')).rows[0].n as number;
        await c.end();
        return { peak, banner: s.stdout(), rows };
      } finally {
        s.child.kill('SIGTERM');
        expect(await s.exited).toBe(0);
        await db.drop();
      }
    };
    const two = await runWith(2);
    expect(two.banner).toMatch(/database: postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/conns_\w+ \(up to 2 connections\)/);
    // Every request answered (20 creates + 20 bulk creates of 50), through two connections at most.
    expect(two.rows).toBe(20 + 20 * 50);
    expect(two.peak).toBeGreaterThanOrEqual(1);
    expect(two.peak).toBeLessThanOrEqual(2);
    const eight = await runWith(8);
    expect(eight.rows).toBe(20 + 20 * 50);
    expect(eight.peak).toBeGreaterThan(2);
    expect(eight.peak).toBeLessThanOrEqual(8);
  });
});

describe('--database-connections refused or ignored', () => {
  const refused = async (args: string[], env: Record<string, string> = {}): Promise<string[]> => {
    const s = serve(args, env);
    const code = await Promise.race([s.exited, new Promise<'started'>((r) => setTimeout(() => r('started'), 15_000))]);
    if (code === 'started') {
      s.child.kill('SIGTERM');
      throw new Error(`serve started: ${s.stdout()}`);
    }
    expect(code).toBe(1);
    const lines = s.stderr().trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^ {2}hint: /);
    return lines;
  };
  const url = 'postgres://app:secret@127.0.0.1:1/crm';

  it('without a PostgreSQL database, as a flag: one line and a hint, exit 1', async () => {
    const [line, hint] = await refused(['--database-connections', '4']);
    expect(line).toBe('Error: --database-connections applies to a PostgreSQL database only');
    expect(hint).toContain('--database postgres://');
  });

  it('not a whole number from 2 to 1000, from the flag or the variable', async () => {
    expect((await refused(['--database', url, '--database-connections', '1']))[0]).toBe('Error: --database-connections must be a whole number from 2 to 1000, got "1"');
    expect((await refused(['--database', url, '--database-connections', '2.5']))[0]).toBe('Error: --database-connections must be a whole number from 2 to 1000, got "2.5"');
    expect((await refused(['--database', url], { SCHEMASYNC_DATABASE_CONNECTIONS: 'lots' }))[0]).toBe(
      'Error: SCHEMASYNC_DATABASE_CONNECTIONS must be a whole number from 2 to 1000, got "lots"',
    );
  });

  it('the variable without a database is ignored: serve starts on SQLite', async () => {
    const s = serve([], { SCHEMASYNC_DATABASE_CONNECTIONS: 'lots' });
    try {
      await listening(s);
      expect(s.stdout()).not.toContain('database:');
    } finally {
      s.child.kill('SIGTERM');
      expect(await s.exited).toBe(0);
    }
  });
});
