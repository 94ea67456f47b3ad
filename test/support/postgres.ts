import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePort } from './port.js';

/**
 * A real PostgreSQL for the tests (issue 15: "a real PostgreSQL in tests, started by the test
 * suite itself on a fresh machine"): Debian's server binaries, a cluster initialised into a
 * fresh temp folder, listening on 127.0.0.1 and a free port, its socket in a folder it owns.
 * Nothing here needs a person: vitest's globalSetup (postgres-global.ts) starts one cluster for
 * the run and stops it at the end; each test file makes its own database (postgres-db.ts).
 *
 * Debian's initdb and pg_ctl refuse to run as root, so as root they run as the `postgres`
 * system user (`runuser -u postgres --`) with folders it owns; as anyone else, directly.
 * Local (socket) connections trust; TCP connections need the generated password (scram), so
 * a test can also show what a wrong password does.
 */

const INSTALL_LINE = 'apt-get update && apt-get install -y postgresql';

export interface PostgresCluster {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/postgres`: the superuser, the maintenance database. */
  url: string;
  host: string;
  port: number;
  password: string;
  /** Milliseconds initdb and the first start took (kept out of every test's own time). */
  timings: { initdbMs: number; startMs: number };
  /** Stop the server (fast shutdown), keeping its data: `start()` brings it back on the same port. */
  stop(): void;
  start(): void;
  /** Stop it and remove its folder. Safe to call twice. */
  destroy(): void;
}

/** The newest Debian PostgreSQL server binaries, or PG_BIN when set. */
function findPostgresBin(): string {
  const fromEnv = process.env.PG_BIN;
  if (fromEnv && existsSync(join(fromEnv, 'initdb'))) return fromEnv;
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const newest = versions[0];
  if (newest === undefined) {
    throw new Error(
      `PostgreSQL server binaries not found (no ${base}/*/bin/initdb, PG_BIN unset). The PostgreSQL tests need them: ${INSTALL_LINE}`,
    );
  }
  return join(base, newest, 'bin');
}

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

function postgresIds(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Run a PostgreSQL tool, as `postgres` when we are root; its output only in the error. */
function tool(bin: string, name: string, args: string[]): void {
  const exe = join(bin, name);
  const [cmd, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', exe, ...args]] : [exe, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) {
    throw new Error(`${name} ${args.join(' ')} failed (exit ${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  }
}

/**
 * Settings for a throwaway test cluster: durability off (a crash loses a test run, not
 * data anyone keeps), enough connections for 3 serve processes' pools beside the test
 * files' own.
 */
const SETTINGS = ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'max_connections=300', 'shared_buffers=32MB'];

/**
 * `settings` come after the defaults above, so one of the same name wins (PostgreSQL takes the
 * last `-c` of a name): a bench measuring reads uses PostgreSQL's own shared_buffers rather
 * than the suite's memory-saving 32 MB.
 */
export async function startPostgres(settings: readonly string[] = []): Promise<PostgresCluster> {
  const chosen = [...SETTINGS, ...settings];
  const bin = findPostgresBin();
  const root = mkdtempSync(join(tmpdir(), 'ss-pg-'));
  const data = join(root, 'data');
  const sock = join(root, 'sock');
  const pwfile = join(root, 'pw');
  const log = join(root, 'log');
  const password = randomBytes(12).toString('hex');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (isRoot()) {
    const { uid, gid } = postgresIds();
    chownSync(root, uid, gid);
    chownSync(pwfile, uid, gid);
  }
  chmodSync(root, 0o700);
  const t0 = performance.now();
  tool(bin, 'initdb', [
    '-D', data, '-U', 'postgres', `--pwfile=${pwfile}`, '--auth-local=trust', '--auth-host=scram-sha-256',
    // UTF-8 text, C collation: byte order, the order SQLite gives text (keyset cursors).
    '--encoding=UTF8', '--locale=C', '--no-sync',
  ]);
  rmSync(pwfile, { force: true });
  const initdbMs = performance.now() - t0;
  let port = 0;
  const options = (): string =>
    ['-c listen_addresses=127.0.0.1', `-c port=${port}`, `-c unix_socket_directories=${sock}`, ...chosen.map((s) => `-c ${s}`)].join(' ');
  if (isRoot()) {
    const { uid, gid } = postgresIds();
    execFileSync('mkdir', ['-p', sock]);
    chownSync(sock, uid, gid);
  } else execFileSync('mkdir', ['-p', sock]);
  const start = (): void => tool(bin, 'pg_ctl', ['start', '-w', '-t', '60', '-D', data, '-l', log, '-o', options()]);
  const t1 = performance.now();
  // The free port may be taken between our probe and the server's bind (others run servers
  // here too): a few tries with a fresh port.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      start();
      break;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
  const startMs = performance.now() - t1;
  let running = true;
  let destroyed = false;
  const stop = (): void => {
    if (!running) return;
    tool(bin, 'pg_ctl', ['stop', '-w', '-m', 'fast', '-D', data]);
    running = false;
  };
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    host: '127.0.0.1',
    port,
    password,
    timings: { initdbMs, startMs },
    stop,
    start: () => {
      if (running) return;
      start();
      running = true;
    },
    destroy: () => {
      if (destroyed) return;
      destroyed = true;
      try {
        if (running) tool(bin, 'pg_ctl', ['stop', '-w', '-m', 'immediate', '-D', data]);
      } finally {
        running = false;
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

/** A URL naming another database of the same cluster (same user, password, host). */
export function databaseUrl(adminUrl: string, database: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${database}`;
  return u.toString();
}
