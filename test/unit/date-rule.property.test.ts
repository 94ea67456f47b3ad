import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isDate } from '../../engine/model/types/date.js';

// isDate decides by arithmetic (no Date per value, it runs for every date of every write and
// import row); it must agree with the calendar of JavaScript's Date, its former definition.
function reference(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]) - 1, Number(m[3])];
  if (y < 1) return false;
  const t = new Date(0);
  t.setUTCFullYear(y, mo, d);
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo && t.getUTCDate() === d;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');
const dateLike = fc
  .tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }))
  .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`);
const mangled = fc.tuple(dateLike, fc.nat(9), fc.constantFrom('/', ' ', 'x', '٣', '\n', '')).map(([s, at, c]) => s.slice(0, at) + c + s.slice(at + 1));

describe('isDate', () => {
  it('agrees with the Date calendar on dates, near-dates and any string', () => {
    fc.assert(fc.property(fc.oneof(dateLike, mangled, fc.string({ maxLength: 12 })), (s) => {
      expect(isDate(s)).toBe(reference(s));
    }), { numRuns: 20_000 });
  });

  it('agrees on every day of the leap-year boundaries', () => {
    for (const y of [1, 4, 100, 200, 400, 1900, 2000, 2023, 2024, 2100, 9996, 9999]) {
      for (let m = 0; m <= 13; m++) for (let d = 0; d <= 32; d++) {
        const s = `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;
        if (isDate(s) !== reference(s)) expect.fail(`${s}: ${isDate(s)} vs ${reference(s)}`);
      }
    }
  });
});
