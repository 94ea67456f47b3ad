import { fileURLToPath } from 'node:url';

/**
 * The CLI's entry (bin/schemasync). `records import` streams a file of any size through
 * one process and must keep its memory flat (issue 17: under 150 MB for 1,000,000 rows).
 * What grows with the rate rows go through is not the data (about 11 MB live) but V8's
 * young generation, which widens to 2 × 16 MB when objects keep surviving a scavenge — an
 * import's batch in flight always does. The limit can only be set when the process starts
 * (v8.setFlagsFromString comes too late), so that one command runs in a child started with
 * it; every other command starts as it is, with no extra process.
 */
const YOUNG_LIMIT = '--max-semi-space-size=4';
const CHILD = 'SCHEMASYNC_LAUNCHED';
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export async function launch(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  if (process.env[CHILD] === '1') return runAsChild();
  const at = argv.indexOf('records');
  if (at < 0 || argv[at + 1] !== 'import' || process.execArgv.some((a) => a.startsWith('--max-semi-space-size'))) {
    await import('./main.js');
    return;
  }
  const bin = fileURLToPath(new URL('../../bin/schemasync', import.meta.url));
  // Loaded here, not at the top: the child, which runs the import, never needs it.
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [...process.execArgv, YOUNG_LIMIT, bin, ...argv], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [CHILD]: '1' },
  });
  // The child is the command: a signal to this process goes on to it (from a terminal it
  // gets Ctrl-C itself as well; a second SIGINT to a dying process changes nothing).
  for (const signal of FORWARDED) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      // Ended by a signal: end the same way, so a shell or CI sees what the child saw.
      for (const s of FORWARDED) process.removeAllListeners(s);
      process.kill(process.pid, signal);
    } else {
      process.exitCode = code ?? 1;
    }
  });
}

/**
 * In the child: the IPC channel only tells it that its parent is gone — killed with a
 * signal it could not pass on (SIGKILL) — and then the import stops at once, as the parent
 * did, instead of writing on unseen. The channel must not keep the process alive.
 */
async function runAsChild(): Promise<void> {
  delete process.env[CHILD];
  process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
  process.channel?.unref();
  await import('./main.js');
}
