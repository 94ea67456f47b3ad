import { RANGE_FIELDS, checkRange, fail } from './checks.js';
import { toNumber } from './number.js';
import type { AttributeTypeDef } from './type-def.js';

export const integer: AttributeTypeDef = {
  type: 'integer',
  noun: 'an integer',
  aliases: ['int', 'bigint'],
  valueSchema: { type: 'integer' },
  fields: RANGE_FIELDS,
  uniqueAllowed: true,
  list: 'never',
  fullText: false,
  wholeBounds: true,
  parse: (value, spec) =>
    typeof value === 'number' && Number.isSafeInteger(value)
      ? checkRange(value, spec)
      : fail('must be an integer'),
  widensTo: ['number', 'text', 'json'],
  convertFrom: (value) => {
    const n = toNumber(value);
    return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
  },
  filter: { ordered: true, text: false },
};
