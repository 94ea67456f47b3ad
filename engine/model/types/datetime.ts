import { isDate } from './date.js';
import { fail, ok, stringify } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

// ISO 8601 with a time and an explicit zone; stored normalised to UTC so that string
// order is time order (sort and range filters compare the stored text).
const DATETIME = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function normalise(s: string): string | undefined {
  const m = DATETIME.exec(s);
  if (!m || !isDate(m[1]!)) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

export const datetime: AttributeTypeDef = {
  type: 'datetime',
  noun: 'an ISO 8601 datetime with a zone (2024-05-01T09:30:00Z)',
  fields: {},
  uniqueAllowed: true,
  column: 'TEXT',
  parse: (value) => {
    const v = typeof value === 'string' ? normalise(value) : undefined;
    return v === undefined ? fail('must be an ISO 8601 datetime with a zone (2024-05-01T09:30:00Z)') : ok(v);
  },
  toColumn: (value) => value as string,
  fromColumn: (value) => value,
  widensTo: ['text', 'json'],
  convertFrom: (value) => {
    const s = stringify(value);
    if (s === undefined) return undefined;
    if (isDate(s)) return `${s}T00:00:00.000Z`;
    return normalise(s);
  },
};
