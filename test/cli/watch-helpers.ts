import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Helpers for the watch/dev CLI tests: a temp project, the real bin, polling (never timing). */
export const BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../bin/schemasync');

export function tempProject(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ss-dev-'));
  writeFileSync(join(dir, 'schemasync.yaml'), 'source: crm\nschema: schema\n');
  mkdirSync(join(dir, 'schema'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'schema', name), text);
  return dir;
}

/** An editor's atomic save: write a temp file beside it, rename over the real one. */
export function atomicWrite(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export interface Running {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
  /** Waits until stdout matches; throws with the output so far when it does not. */
  waitFor(pattern: RegExp | string, what?: string): Promise<RegExpMatchArray>;
}

export function start(args: string[], cwd: string, env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: '1', SCHEMASYNC_DEBUG: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  let done = false;
  void exited.then(() => (done = true));
  return {
    child,
    out: () => out,
    err: () => err,
    exited,
    async waitFor(pattern, what) {
      return poll(
        () => {
          const m = typeof pattern === 'string' ? (out.includes(pattern) ? ([pattern] as RegExpMatchArray) : null) : out.match(pattern);
          if (!m && done) throw new Error(`process exited before ${what ?? String(pattern)}\nstdout:\n${out}\nstderr:\n${err}`);
          return m ?? undefined;
        },
        () => `${what ?? String(pattern)}\nstdout:\n${out}\nstderr:\n${err}`,
      );
    },
  };
}

/** Retries `probe` until it returns a value; the deadline only bounds a hang, nothing is timed. */
export async function poll<T>(probe: () => T | undefined | Promise<T | undefined>, describe: () => string, limitMs = 20_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${describe()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function credentials(dataDir: string): { baseUrl: string; apiKey: string } {
  return JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { baseUrl: string; apiKey: string };
}

export async function api(baseUrl: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as { data?: unknown; code?: string } };
}

/** Attribute names of an object as the server holds them, or undefined when it does not exist. */
export async function attributesOf(baseUrl: string, key: string, object: string): Promise<string[] | undefined> {
  const r = await api(baseUrl, key, 'GET', `/schema/objects/${object}`);
  if (r.status !== 200) return undefined;
  const data = r.body.data as { attributes: { name: string; system?: boolean }[] };
  return data.attributes.filter((a) => !a.system).map((a) => a.name);
}

/** `[run N] sync started/finished` lines in order: proof that no two syncs overlapped. */
export function runLines(out: string): { run: number; what: 'started' | 'finished' }[] {
  return [...out.matchAll(/\[run (\d+)\] sync (started|finished)/g)].map((m) => ({ run: Number(m[1]), what: m[2] as 'started' | 'finished' }));
}
