import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

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
 * 320–400 ms, and a 100,000-row one waited as long for its first batch). The factor it grows
 * by (`--semi-space-growth-factor`) is read at each growth instead, so the import lets it grow
 * to YOUNG_CEILING and then sets the factor to 1, in this process. Stopped at its first size
 * (2 × 1 MB) it scavenged so often that the CLI spent a quarter of its CPU in GC (100,000
 * rows: 0.87–1.0 s CPU; with 2 × 4 MB 0.68–0.79 s, as in the child before). 1,000,000 rows
 * peaked at 125–132 MB when this was written and at 97–98 MB in the bench runs of
 * 2026-11-29 (later, with the CLI on node:http). test/unit/young-generation.test.ts checks the flag.
 */
const YOUNG_CEILING = 8 * 2 ** 20;
const STOP_GROWING = '--semi-space-growth-factor=1';

export async function launch(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const at = argv.indexOf('records');
  if (at >= 0 && argv[at + 1] === 'import') boundYoungGeneration();
  await import('./main.js');
}

/**
 * Lets the young generation grow to `ceiling` bytes (both semi-spaces), then no further. It
 * grows only in a GC, so it is looked at after each one until it has reached the ceiling.
 */
export function boundYoungGeneration(ceiling = YOUNG_CEILING): void {
  const size = (): number => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
  if (size() >= ceiling) {
    setFlagsFromString(STOP_GROWING);
    return;
  }
  const watch = new PerformanceObserver(() => {
    if (size() < ceiling) return;
    setFlagsFromString(STOP_GROWING);
    watch.disconnect();
  });
  watch.observe({ entryTypes: ['gc'] });
}
