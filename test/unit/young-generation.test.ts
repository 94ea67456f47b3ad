import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// `records import` keeps its memory flat by stopping V8's young generation from growing past
// 2 × 4 MB, through a flag set at run time (cli/launch.ts boundYoungGeneration). Node
// documents v8.setFlagsFromString after start as possibly doing nothing, so this checks, in a
// fresh process each (the built CLI's module, as the command runs it), that it still holds:
// objects that keep surviving scavenges (an import's batch in flight) widen the young
// generation to its 32 MB ceiling without it and to 8 MB at most with it.
const LAUNCH = pathToFileURL(join(import.meta.dirname, '..', '..', 'dist', 'cli', 'launch.js')).href;
const script = (bound: boolean): string => `
import { getHeapSpaceStatistics } from 'node:v8';
import { boundYoungGeneration } from ${JSON.stringify(LAUNCH)};
${bound ? 'boundYoungGeneration();' : ''}
let keep = [];
let widest = 0;
for (let i = 0; i < 3e6; i++) {
  keep.push({ n: i, s: 'row ' + i });
  if (keep.length > 20000) keep = [];
  if (i % 5000 === 0) {
    widest = Math.max(widest, getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
    // The bound is set after a GC, from a callback: let it run, as an import does at every
    // chunk it reads (64 KB; here ~250 KB of objects are made between two turns).
    await new Promise((r) => setImmediate(r));
  }
}
process.stdout.write(String(widest));
`;

function widestYoungGeneration(bound: boolean): number {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script(bound)], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return Number(r.stdout);
}

describe('the import bounds the young generation', () => {
  it('grows to 16 MB and more unbounded, and stops at 8 MB with the bound', () => {
    expect(widestYoungGeneration(false)).toBeGreaterThanOrEqual(16 * 2 ** 20);
    const bounded = widestYoungGeneration(true);
    expect(bounded).toBeGreaterThanOrEqual(4 * 2 ** 20);
    expect(bounded).toBeLessThanOrEqual(8 * 2 ** 20);
  }, 30_000);
});
