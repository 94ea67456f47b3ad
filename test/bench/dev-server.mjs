// `schemasync dev` in a project folder, for the benches that time a saved edit until the
// server shows it (watch.bench.mjs, compare/cases.mjs).
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export function startDev(checkout, cwd) {
  const child = spawn(process.execPath, [join(checkout, 'bin/schemasync'), 'dev', '--port', '0', '--no-rate-limit'], {
    cwd,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  return {
    child,
    sleep,
    /** The first match of `re` in what the server printed; throws after ~30 s. */
    async waitOut(re) {
      for (let i = 0; i < 3000; i++) {
        const m = out.match(re);
        if (m) return m;
        await sleep(10);
      }
      throw new Error(`timed out waiting for ${re}\n${out}`);
    },
    async stop(signal = 'SIGINT') {
      child.kill(signal);
      await new Promise((r) => child.once('exit', r));
    },
  };
}
