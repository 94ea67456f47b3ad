import { setFlagsFromString } from 'node:v8';

/**
 * The CLI's entry (bin/schemasync). `records import` streams a file of any size through one
 * process and must keep its memory flat (issue 17: under 150 MB for 1,000,000 rows). What
 * grows with the rate rows go through is not the data (about 11 MB live) but V8's young
 * generation, which doubles from 2 × 1 MB up to 2 × 16 MB while objects keep surviving
 * scavenges — an import's batch in flight always does (1,000,000 rows: 146 MB at the peak).
 *
 * The ceiling of that growth (`--max-semi-space-size`) is fixed when the heap is made, before
 * any of our code runs, so the import used to run in a child process started with it: a
 * second Node start on every import, ~100–150 ms of its wall time (a one-row import took
 * 320–400 ms, and the 100,000-row one waited as long for its first batch). The factor it
 * grows by (`--semi-space-growth-factor`) is read at each growth instead, so set to 1 before
 * the first import allocation it keeps the young generation at its first size, in this
 * process: 1,000,000 rows peak at ~116 MB (test/unit/young-generation.test.ts checks that the
 * flag holds). The cost is more, smaller scavenges (~15% more CPU in the CLI, which has a core
 * of its own while the server writes). Every other command starts as it is.
 */
export const BOUND_YOUNG_GENERATION = '--semi-space-growth-factor=1';

export async function launch(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const at = argv.indexOf('records');
  if (at >= 0 && argv[at + 1] === 'import') setFlagsFromString(BOUND_YOUNG_GENERATION);
  await import('./main.js');
}
