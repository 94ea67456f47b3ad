import { LENGTH_FIELDS, hasStrayCharacters, parseString, stringify } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

// Deliberately the pragmatic shape check (one @, a dot in the domain, no spaces):
// RFC 5322 in full accepts addresses no mail form would. `\s` already keeps out spaces
// and newlines; control characters (NUL, DEL, C1) are no more part of an address.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const isEmail = (s: string): boolean => EMAIL.test(s) && s.length <= 254 && !hasStrayCharacters(s);

export const email: AttributeTypeDef = {
  type: 'email',
  noun: 'an email address',
  valueSchema: { type: 'string' },
  fields: LENGTH_FIELDS,
  uniqueAllowed: true,
  list: 'never',
  fullText: true,
  parse: (value, spec) => parseString(value, spec, 'an email address', isEmail),
  widensTo: ['text'],
  convertFrom: (value) => {
    const s = stringify(value);
    return s !== undefined && isEmail(s) ? s : undefined;
  },
  filter: { ordered: true, text: true },
};
