import { fail, ok } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

export const json: AttributeTypeDef = {
  type: 'json',
  noun: 'any JSON value',
  valueSchema: {},
  fields: {},
  uniqueAllowed: false,
  column: 'TEXT',
  parse: (value) => (value === undefined ? fail('must be a JSON value') : ok(value)),
  toColumn: (value) => JSON.stringify(value),
  fromColumn: (value) => (value === null ? null : JSON.parse(String(value))),
  widensTo: [],
  convertFrom: (value) => value,
  // Any value matches when it, or one of its elements, equals the operand (json_each gives
  // true/false as 1/0); its JSON text has no meaningful order.
  filter: { ordered: false, text: false, operand: (value) => ok(typeof value === 'boolean' ? (value ? 1 : 0) : value) },
};
