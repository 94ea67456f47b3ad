import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The built bin as a user runs it (through the SDK), against a test server: needs `npm run build`. */
const bin = join(import.meta.dirname, '..', '..', 'bin', 'schemasync');

export function runCli(base: string, key: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, '--base-url', base, '--api-key', key, '--no-color', ...args], {
      cwd,
      env: { ...process.env, SCHEMASYNC_API_KEY: '', SCHEMASYNC_BASE_URL: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // 'close', not 'exit': at 'exit' the child's stdout and stderr may not be read to the end yet.
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
