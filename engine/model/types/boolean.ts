import { fail, ok } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

const WORDS: Record<string, boolean> = { true: true, false: false, yes: true, no: false, '1': true, '0': false };

export const boolean: AttributeTypeDef = {
  type: 'boolean',
  noun: 'true or false',
  aliases: ['bool'],
  valueSchema: { type: 'boolean' },
  fields: {},
  uniqueAllowed: false,
  list: 'never',
  fullText: false,
  parse: (value) => (typeof value === 'boolean' ? ok(value) : fail('must be true or false')),
  widensTo: ['text', 'json'],
  convertFrom: (value) => {
    if (typeof value === 'boolean') return value;
    if (value === 0 || value === 1) return value === 1;
    if (typeof value === 'string') return WORDS[value.trim().toLowerCase()];
    return undefined;
  },
  filter: { ordered: false, text: false },
};
