import { fail, ok, stringify } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar day in YYYY-MM-DD, years 0001..9999 (2023-02-29 is not one). */
export function isDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]) - 1, Number(m[3])];
  if (y < 1) return false;
  // setUTCFullYear, not Date.UTC(y, …): Date.UTC reads years 0–99 as 1900–1999.
  const t = new Date(0);
  t.setUTCFullYear(y, mo, d);
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo && t.getUTCDate() === d;
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
