import { OPTIONS_FIELD, fail, ok, stringify } from './checks.js';
import { select } from './select.js';
import type { AttributeTypeDef } from './type-def.js';

export const multiselect: AttributeTypeDef = {
  type: 'multiselect',
  noun: 'a list of options',
  aliases: ['tags'],
  valueSchema: { type: 'array', items: { type: 'string' } },
  fields: OPTIONS_FIELD,
  requiredFields: ['options'],
  uniqueAllowed: false,
  list: 'always',
  fullText: true,
  parse: (value, spec) => {
    const options = spec.options ?? [];
    const allowed = `a list of ${options.map((o) => JSON.stringify(o)).join(', ')}`;
    if (!Array.isArray(value)) return fail(`must be ${allowed}`);
    const bad = value.filter((v) => typeof v !== 'string' || !options.includes(v));
    if (bad.length > 0) return fail(`must be ${allowed} (not ${bad.map((b) => JSON.stringify(b)).join(', ')})`);
    if (new Set(value).size !== value.length) return fail('must not list the same option twice');
    return ok(value);
  },
  widensTo: ['json'],
  convertFrom: (value) => {
    if (Array.isArray(value)) return value;
    const s = stringify(value);
    return s === undefined ? undefined : [s];
  },
  // A list matches when one of its options is the operand: one option, checked (a typo
  // would silently match nothing).
  filter: { ordered: false, text: false, operand: (value, spec) => select.parse(value, spec) },
};
