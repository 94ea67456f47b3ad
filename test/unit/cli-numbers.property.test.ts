import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grouped } from '../../cli/render/numbers.js';

// cli/render/numbers.ts writes what toLocaleString('en-US') writes for a rounded number,
// without loading ICU's locale data: the summaries and the progress bar read the same.
describe('grouped', () => {
  it('equals Math.round(n).toLocaleString("en-US") for any number', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.double({ min: -1e15, max: 1e15, noNaN: true }), fc.constantFrom(0, -0, 999, 1000, 999_999, 1_000_000, 0.5, -0.5, 999.5)), (n) => {
        expect(grouped(n)).toBe(Math.round(n).toLocaleString('en-US'));
      }),
      { numRuns: 2000 },
    );
  });
});
