import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { TestServer } from './helpers.js';

/** `schemasync records …` as a user runs it: the built bin (dist/) in a child process. */
export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'schemasync');

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function startCli(s: TestServer, args: string[], options: { cwd: string; stdin?: string; key?: string }): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(process.execPath, [BIN, '--base-url', s.base, '--api-key', options.key ?? s.ownerKey, '--no-color', ...args], {
    cwd: options.cwd,
    env: { ...process.env, SCHEMASYNC_API_KEY: '', SCHEMASYNC_BASE_URL: '', NO_COLOR: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  else child.stdin!.end();
  const done = new Promise<CliRun>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

export function cli(s: TestServer, args: string[], options: { cwd: string; stdin?: string; key?: string }): Promise<CliRun> {
  return startCli(s, args, options).done;
}

/** How many records the object holds (the search route's total). */
export async function countOf(s: TestServer, object: string): Promise<number> {
  const r = await s.call('POST', `/records/${object}/search`, { body: { limit: 1 } });
  if (r.status !== 200) throw new Error(`count ${object}: ${r.status} ${r.text}`);
  return r.body.page.total as number;
}

/** Every record's values, in a stable order (by `key`), ids left out. */
export async function valuesOf(s: TestServer, object: string, key: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  do {
    const r = await s.call('POST', `/records/${object}/search`, { body: { limit: 500, ...(cursor ? { cursor } : {}) } });
    out.push(...(r.body.data as { values: Record<string, unknown> }[]).map((x) => x.values));
    cursor = r.body.page.nextCursor ?? undefined;
  } while (cursor);
  return out.sort((a, b) => String(a[key]).localeCompare(String(b[key])));
}
