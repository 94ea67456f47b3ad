import { fail, ok, stringify } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar day in YYYY-MM-DD (2023-02-29 is not one). */
export function isDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

export const date: AttributeTypeDef = {
  type: 'date',
  noun: 'a date (YYYY-MM-DD)',
  fields: {},
  uniqueAllowed: true,
  column: 'TEXT',
  parse: (value) =>
    typeof value === 'string' && isDate(value) ? ok(value) : fail('must be a date (YYYY-MM-DD)'),
  toColumn: (value) => value as string,
  fromColumn: (value) => value,
  widensTo: ['datetime', 'text', 'json'],
  convertFrom: (value) => {
    const s = stringify(value);
    if (s === undefined) return undefined;
    if (isDate(s)) return s;
    const t = Date.parse(s);
    return Number.isNaN(t) ? undefined : new Date(t).toISOString().slice(0, 10);
  },
};
