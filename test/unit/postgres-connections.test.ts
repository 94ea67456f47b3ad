import { describe, expect, it } from 'vitest';
import { DEFAULT_CONNECTIONS, poolSizes } from '../../engine/store/postgres/connections.js';

// The split of `--database-connections` between a process's two pools (the end-to-end bound is
// test/cli/serve-connections.test.ts): never more than asked in all, at least one each.
describe('poolSizes', () => {
  it('splits n between the pools, the main one taking the larger half, never more than n in all', () => {
    expect(poolSizes()).toEqual({ max: 10, serialMax: 10 });
    expect(DEFAULT_CONNECTIONS).toBe(20);
    expect(poolSizes(2)).toEqual({ max: 1, serialMax: 1 });
    expect(poolSizes(3)).toEqual({ max: 2, serialMax: 1 });
    for (let n = 2; n <= 1000; n++) {
      const { max, serialMax } = poolSizes(n);
      expect(max + serialMax).toBe(n);
      expect(serialMax).toBeGreaterThanOrEqual(1);
      expect(max).toBeGreaterThanOrEqual(serialMax);
    }
  });

  it('refuses what cannot give each pool a connection, or is not a whole number', () => {
    for (const n of [0, 1, 2.5, 1001, Number.NaN]) expect(() => poolSizes(n)).toThrow(RangeError);
  });
});
