import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BOUND_YOUNG_GENERATION } from '../../cli/launch.js';

// `records import` keeps its memory flat by setting V8's young-generation growth factor at
// run time (cli/launch.ts). Node documents v8.setFlagsFromString after start as possibly
// doing nothing, so this checks, in a fresh process each, that the flag still holds: objects
// that keep surviving scavenges (an import's batch in flight) widen the young generation to
// its 32 MB ceiling without it and leave it at its first size with it.
const SCRIPT = `
const v8 = require('node:v8');
if (process.argv[1]) v8.setFlagsFromString(process.argv[1]);
let keep = [];
let widest = 0;
for (let i = 0; i < 3e6; i++) {
  keep.push({ n: i, s: 'row ' + i });
  if (keep.length > 20000) keep = [];
  if (i % 5000 === 0) widest = Math.max(widest, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
}
process.stdout.write(String(widest));
`;

function widestYoungGeneration(flag: string): number {
  const r = spawnSync(process.execPath, ['-e', SCRIPT, '--', flag], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return Number(r.stdout);
}

describe('the import bounds the young generation', () => {
  it('grows to 16 MB and more unbounded, and stays at 4 MB or less with the flag', () => {
    expect(widestYoungGeneration('')).toBeGreaterThanOrEqual(16 * 2 ** 20);
    expect(widestYoungGeneration(BOUND_YOUNG_GENERATION)).toBeLessThanOrEqual(4 * 2 ** 20);
  }, 30_000);
});
