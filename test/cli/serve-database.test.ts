import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, inject } from 'vitest';
import { freePort } from '../support/port.js';

/**
 * `serve`/`dev --database <url>` and SCHEMASYNC_DATABASE_URL when the database cannot be used
 * (issue 15 "Bad input and faults", contract.md §4/§8): one line naming the host and the
 * database with the password masked, a hint, exit 1, no stack — against a really refused
 * port and a really wrong password on the run's PostgreSQL cluster. The real bin (dist/).
 */
const bin = join(import.meta.dirname, '..', '..', 'bin', 'schemasync');
const dataDir = mkdtempSync(join(tmpdir(), 'schemasync-dburl-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: 'serve' | 'dev', args: string[], env: Record<string, string | undefined> = {}): Promise<Ran> {
  const child = spawn(process.execPath, [bin, command, '--port', '0', '--data', dataDir, '--no-studio', ...args], {
    cwd: dataDir,
    env: { ...process.env, SCHEMASYNC_DATABASE_URL: undefined, SCHEMASYNC_DATABASE_CONNECTIONS: undefined, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  // A server that did start is stopped at once, so a wrong outcome fails instead of hanging.
  const started = setInterval(() => {
    if (/listening on|server on/.test(stdout)) child.kill('SIGTERM');
  }, 50);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearInterval(started);
      resolve({ code, stdout, stderr });
    }),
  );
}

function expectOneErrorLine(r: Ran, secret: string): string {
  expect(r.code).toBe(1);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toMatch(/^ {2}hint: /);
  expect(r.stderr).not.toContain(secret);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

describe('a database that cannot be used', () => {
  it('a refused port: the host, port and database named, the password masked, exit 1', async () => {
    const port = await freePort();
    const r = await run('serve', ['--database', `postgres://app:hunter2secret@127.0.0.1:${port}/crm`]);
    const line = expectOneErrorLine(r, 'hunter2secret');
    expect(line).toBe(`Error: could not use the PostgreSQL database "crm" at 127.0.0.1:${port} (postgres://app:***@127.0.0.1:${port}/crm): connection refused`);
    expect(r.stderr).toContain(`is running at 127.0.0.1:${port}`);
  });

  it('a wrong password on a real PostgreSQL: an authentication failure, the password masked', async () => {
    const admin = new URL(inject('postgresUrl'));
    admin.password = 'not-the-password-xyz';
    const r = await run('serve', ['--database', admin.toString()]);
    const line = expectOneErrorLine(r, 'not-the-password-xyz');
    expect(line).toBe(
      `Error: could not use the PostgreSQL database "postgres" at 127.0.0.1:${admin.port} (postgres://postgres:***@127.0.0.1:${admin.port}/postgres): authentication failed (wrong user or password)`,
    );
    expect(r.stderr).toContain('hint: Check the user and password');
  });

  it('SCHEMASYNC_DATABASE_URL is read when --database is absent, and dev reads it too', async () => {
    const port = await freePort();
    const r = await run('dev', [], { SCHEMASYNC_DATABASE_URL: `postgres://app:envsecret@127.0.0.1:${port}/fromenv` });
    const line = expectOneErrorLine(r, 'envsecret');
    expect(line).toContain(`"fromenv" at 127.0.0.1:${port}`);
  });

  it('--database wins over SCHEMASYNC_DATABASE_URL', async () => {
    const port = await freePort();
    const r = await run('serve', ['--database', `postgres://app:flagsecret@127.0.0.1:${port}/fromflag`], { SCHEMASYNC_DATABASE_URL: 'mysql://x:envsecret@h/fromenv' });
    const line = expectOneErrorLine(r, 'flagsecret');
    expect(line).toContain('"fromflag"');
    expect(r.stderr).not.toContain('fromenv');
  });

  it('a URL that is not postgres:// is refused before anything starts, its password unprinted', async () => {
    const r = await run('serve', ['--database', 'mysql://root:mysqlsecret@db:3306/crm']);
    const line = expectOneErrorLine(r, 'mysqlsecret');
    expect(line).toBe('Error: --database must be a postgres:// URL, got mysql:// (expected postgres://user:password@host:5432/database)');
    const env = await run('serve', [], { SCHEMASYNC_DATABASE_URL: 'not a url' });
    expect(expectOneErrorLine(env, 'not a url')).toBe('Error: SCHEMASYNC_DATABASE_URL is not a URL (expected postgres://user:password@host:5432/database)');
  });
});

describe('--database-connections refused or ignored (serve-connections.test.ts: the bound itself)', () => {
  const url = 'postgres://app:connsecret@127.0.0.1:1/crm';

  it('without a PostgreSQL database, as a flag: one line and a hint, exit 1', async () => {
    const r = await run('serve', ['--database-connections', '4']);
    expect(expectOneErrorLine(r, 'connsecret')).toBe('Error: --database-connections applies to a PostgreSQL database only');
    expect(r.stderr).toContain('--database postgres://');
  });

  it('not a whole number from 2 to 1000, from the flag or the variable', async () => {
    for (const n of ['1', '2.5', '1001']) {
      const r = await run('serve', ['--database', url, '--database-connections', n]);
      expect(expectOneErrorLine(r, 'connsecret')).toBe(`Error: --database-connections must be a whole number from 2 to 1000, got "${n}"`);
    }
    const env = await run('dev', ['--database', url], { SCHEMASYNC_DATABASE_CONNECTIONS: 'lots' });
    expect(expectOneErrorLine(env, 'connsecret')).toBe('Error: SCHEMASYNC_DATABASE_CONNECTIONS must be a whole number from 2 to 1000, got "lots"');
  });

  it('the variable without a database is ignored: serve starts on SQLite', async () => {
    const r = await run('serve', [], { SCHEMASYNC_DATABASE_CONNECTIONS: 'lots' });
    expect(r.stdout).toMatch(/listening on/);
    expect(r.stdout).not.toContain('database:');
    expect(r.stderr).not.toContain('Error');
  });
});
