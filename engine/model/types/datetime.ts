import { isDate } from './date.js';
import { fail, ok, stringify } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

// ISO 8601 with a time and an explicit zone; stored normalised to UTC so that string
// order is time order (sort and range filters compare the stored text).
const DATETIME = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const NOUN = 'an ISO 8601 datetime with a zone (2024-05-01T09:30:00Z)';

// The stored text keeps its fixed 24-character form (and so its string order = time order)
// only for years 0001..9999 in UTC: toISOString writes "+010000-…" or "-000001-…" outside,
// text the API itself refuses and that sorts among the other values by its first character.
const FIRST = Date.parse('0001-01-01T00:00:00.000Z');
const LAST = Date.parse('9999-12-31T23:59:59.999Z');
const RANGE = 'must fall between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z once converted to UTC';

/** The UTC normal form, 'range' when it falls outside 0001..9999, undefined when no datetime. */
function normalise(s: string): string | 'range' | undefined {
  const m = DATETIME.exec(s);
  // Date.parse reads the ISO form's 4-digit year as written (0050 stays 0050); isDate checks
  // the written day is a real one, which Date.parse would roll over (02-30 → 03-02).
  if (!m || !isDate(m[1]!)) return undefined;
  const t = Date.parse(s);
  if (Number.isNaN(t)) return undefined;
  return t < FIRST || t > LAST ? 'range' : new Date(t).toISOString();
}

export const datetime: AttributeTypeDef = {
  type: 'datetime',
  noun: NOUN,
  aliases: ['timestamp', 'time'],
  valueSchema: { type: 'string' },
  fields: {},
  uniqueAllowed: true,
  list: 'never',
  fullText: false,
  parse: (value) => {
    const v = typeof value === 'string' ? normalise(value) : undefined;
    if (v === 'range') return fail(`${RANGE} (got ${JSON.stringify(value)})`);
    return v === undefined ? fail(`must be ${NOUN}`) : ok(v);
  },
  widensTo: ['text', 'json'],
  convertFrom: (value) => {
    const s = stringify(value);
    if (s === undefined) return undefined;
    if (isDate(s)) return `${s}T00:00:00.000Z`;
    const v = normalise(s);
    return v === 'range' ? undefined : v;
  },
  filter: { ordered: true, text: false },
};
