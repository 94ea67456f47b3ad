// One way for every benchmark to check a target (issue 13: a missed target must be loud).
// It prints the verdict on the line, records the miss for scripts/bench.mjs's summary (the
// file it names in SCHEMASYNC_BENCH_MISSES, one JSON line per miss) and makes the bench
// process exit non-zero, so a bench run on its own fails too.
import { appendFileSync } from 'node:fs';
import { basename } from 'node:path';

/** `ok`: the measurement met the target; `label`: what was measured; `detail`: value vs target. */
export function checkTarget(label, ok, detail) {
  console.log(`  ${ok ? 'target met' : 'TARGET MISSED'}: ${label}: ${detail}`);
  if (ok) return;
  process.exitCode = 1;
  const file = process.env.SCHEMASYNC_BENCH_MISSES;
  const bench = basename(process.argv[1] ?? 'bench');
  if (file) appendFileSync(file, `${JSON.stringify({ bench, label, detail })}\n`);
}
