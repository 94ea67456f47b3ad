import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `schemasync serve` as a separate process (the real bin, which loads dist/: run
 * `npm run build` first). Behaviour that only shows between processes — a socket closed
 * while the other side is still sending, a revoke through another server — needs this.
 */
const bin = join(import.meta.dirname, '..', '..', 'bin', 'schemasync');

export interface ServeProcess {
  child: ChildProcess;
  baseUrl: string;
  /** The owner key from <data>/credentials.json. */
  ownerKey: string;
  stdout(): string;
  stop(): void;
}

/** `rateLimit: true` keeps the rate limits on (they are off by default here, so tests may send many requests). */
export function startServeProcess(dataDir: string, args: string[] = [], options: { rateLimit?: boolean } = {}): Promise<ServeProcess> {
  const limits = options.rateLimit === true ? [] : ['--no-rate-limit'];
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--data', dataDir, ...limits, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const stop = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  return new Promise((resolve, reject) => {
    let started = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      // Once started, later output is only collected: the data folder may be gone by then
      // (a test's cleanup), and reading credentials.json again would throw outside any test.
      if (started) return;
      const m = /listening on (http:\/\/\S+)[\s\S]*\ndata: .*\n/.exec(out.replace(/\x1b\[[0-9;]*m/g, ''));
      if (!m) return;
      started = true;
      try {
        const ownerKey = (JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { apiKey: string }).apiKey;
        resolve({ child, baseUrl: m[1]!, ownerKey, stdout: () => out, stop });
      } catch (err) {
        stop();
        reject(err as Error);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}
