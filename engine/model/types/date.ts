import { fail, ok, stringify } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

/** Days in each month of a common year; February gains one in a leap year. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The number the ASCII digits s[at..at+len) write, or -1 if one is not a digit. */
function digits(s: string, at: number, len: number): number {
  let n = 0;
  for (let i = at; i < at + len; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/**
 * A real calendar day in YYYY-MM-DD, years 0001..9999 (2023-02-29 is not one), on the
 * proleptic Gregorian calendar as JavaScript's Date reads it. By arithmetic, not a Date
 * object per call: every date value of a write or an import passes here (a 10,000-record
 * bulk-create allocated 10,000 Dates for it).
 */
export function isDate(s: string): boolean {
  if (s.length !== 10 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return false;
  const y = digits(s, 0, 4);
  const m = digits(s, 5, 2);
  const d = digits(s, 8, 2);
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return d <= MONTH_DAYS[m - 1]! + (m === 2 && leap ? 1 : 0);
}

export const date: AttributeTypeDef = {
  type: 'date',
  noun: 'a date (YYYY-MM-DD)',
  valueSchema: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  fields: {},
  uniqueAllowed: true,
  list: 'never',
  fullText: false,
  parse: (value) =>
    typeof value === 'string' && isDate(value) ? ok(value) : fail('must be a date (YYYY-MM-DD, years 0001 to 9999)'),
  widensTo: ['datetime', 'text', 'json'],
  convertFrom: (value) => {
    const s = stringify(value);
    if (s === undefined) return undefined;
    if (isDate(s)) return s;
    const t = Date.parse(s);
    if (Number.isNaN(t)) return undefined;
    const day = new Date(t).toISOString().slice(0, 10);
    // Outside 0001..9999 toISOString writes "+010000-…", which sliced is no date.
    return isDate(day) ? day : undefined;
  },
  filter: { ordered: true, text: false },
};
