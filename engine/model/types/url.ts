import { LENGTH_FIELDS, fail, hasStrayCharacters, parseString, stringify, truncate } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

// Only http(s): a `javascript:` URL stored here would become a link in someone's UI.
function isUrl(s: string): boolean {
  if (hasStrayCharacters(s)) return false;
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export const url: AttributeTypeDef = {
  type: 'url',
  noun: 'an http(s) URL',
  aliases: ['link', 'uri'],
  valueSchema: { type: 'string' },
  fields: LENGTH_FIELDS,
  uniqueAllowed: true,
  list: 'never',
  fullText: true,
  parse: (value, spec) =>
    typeof value === 'string' && hasStrayCharacters(value)
      ? fail(`must be an http(s) URL with no whitespace around it and no control characters (got ${JSON.stringify(truncate(value))})`)
      : parseString(value, spec, 'an http(s) URL', isUrl),
  widensTo: ['text'],
  convertFrom: (value) => {
    const s = stringify(value);
    return s !== undefined && isUrl(s) ? s : undefined;
  },
  filter: { ordered: true, text: true },
};
