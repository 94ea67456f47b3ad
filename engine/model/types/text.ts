import { LENGTH_FIELDS, parseString, stringify } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

export const text: AttributeTypeDef = {
  type: 'text',
  noun: 'a string',
  aliases: ['string', 'str', 'varchar', 'textarea'],
  valueSchema: { type: 'string' },
  fields: LENGTH_FIELDS,
  uniqueAllowed: true,
  list: 'never',
  fullText: true,
  parse: (value, spec) => parseString(value, spec, 'a string'),
  widensTo: ['json'],
  convertFrom: stringify,
  filter: { ordered: true, text: true },
};
