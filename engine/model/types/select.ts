import { OPTIONS_FIELD, fail, ok, stringify } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

export const select: AttributeTypeDef = {
  type: 'select',
  noun: 'one of the options',
  aliases: ['enum', 'choice'],
  valueSchema: { type: 'string' },
  fields: OPTIONS_FIELD,
  requiredFields: ['options'],
  uniqueAllowed: true,
  list: 'never',
  fullText: true,
  parse: (value, spec) => {
    const options = spec.options ?? [];
    if (typeof value === 'string' && options.includes(value)) return ok(value);
    return fail(`must be one of ${options.map((o) => JSON.stringify(o)).join(', ')}`);
  },
  widensTo: ['text', 'multiselect', 'json'],
  // Whether the converted value is one of the new options is checked by parse().
  convertFrom: (value) => (Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : stringify(value)),
  // Option names sort alphabetically, not in the declared order: no gt…lte. A part of an
  // option (startsWith "closed_") can mean something.
  filter: { ordered: false, text: true },
};
