import { fail, ok } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

export const json: AttributeTypeDef = {
  type: 'json',
  noun: 'any JSON value',
  aliases: ['object'],
  valueSchema: {},
  fields: {},
  uniqueAllowed: false,
  list: 'always',
  fullText: false,
  parse: (value) => (value === undefined ? fail('must be a JSON value') : ok(value)),
  widensTo: [],
  convertFrom: (value) => value,
  // Any value matches when it, or one of its elements, equals the operand (json_each gives
  // true/false as 1/0); its JSON text has no meaningful order.
  filter: { ordered: false, text: false, operand: (value) => ok(value) },
};
