import type { AttributeSpec, AttributeType } from '../attribute.js';
import { boolean } from './boolean.js';
import { date } from './date.js';
import { datetime } from './datetime.js';
import { document } from './document.js';
import { email } from './email.js';
import { integer } from './integer.js';
import { json } from './json.js';
import { multiselect } from './multiselect.js';
import { number } from './number.js';
import { relation } from './relation.js';
import { select } from './select.js';
import { text } from './text.js';
import type { AttributeTypeDef, Parsed } from './type-def.js';
import { url } from './url.js';

/** The attribute-type registry: `Record<AttributeType, …>` so a missing type fails to compile. */
export const TYPES: Readonly<Record<AttributeType, AttributeTypeDef>> = {
  text,
  number,
  integer,
  boolean,
  date,
  datetime,
  email,
  url,
  select,
  multiselect,
  json,
  relation,
  document,
};

export function typeDef(type: AttributeType): AttributeTypeDef {
  return TYPES[type];
}

export function isAttributeType(type: unknown): type is AttributeType {
  return typeof type === 'string' && Object.hasOwn(TYPES, type);
}

/**
 * Parse one value for an attribute: null/undefined is checked against `required`,
 * anything else against the type and its constraints. The one value validator used by
 * record writes, defaults in declarations and the planner's data checks.
 */
export function parseValue(spec: AttributeSpec, value: unknown): Parsed {
  if (value === null || value === undefined) {
    return spec.required ? { ok: false, message: 'is required' } : { ok: true, value: null };
  }
  return TYPES[spec.type].parse(value, spec);
}

/** Whether every value of `from` is a value of `to` without conversion loss. */
export function isWidening(from: AttributeType, to: AttributeType): boolean {
  return from === to || TYPES[from].widensTo.includes(to);
}
