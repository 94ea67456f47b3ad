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
import { firstStoredValueProblem, problemInValue } from '../stored-values.js';
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
  // Before the type: a string the table cannot hold as sent is refused whatever the type
  // (stored-values.ts), so unique, maxLength, options and eq judge what is stored.
  const problem = firstStoredValueProblem(value);
  if (problem) return { ok: false, message: problemInValue(problem), at: problem.path };
  return TYPES[spec.type].parse(value, spec);
}

/** Whether the column holds a JSON list (or, for json, any JSON) rather than one value. */
export function isMultiValued(spec: { type: AttributeType; multiple?: boolean }): boolean {
  const list = TYPES[spec.type].list;
  return list === 'always' || (list === 'multiple' && spec.multiple === true);
}

/** The object whose record ids the attribute holds (a relation's target), or undefined. */
export function relationTarget(spec: { type: AttributeType; target?: string }): string | undefined {
  return TYPES[spec.type].reference === 'record' ? spec.target : undefined;
}

/** Whether the attribute holds documents (their files and claims go with it). */
export function holdsDocuments(spec: { type: AttributeType }): boolean {
  return TYPES[spec.type].reference === 'document';
}

/** Whether cross-object search indexes the attribute (contract.md §3: text-like attributes). */
export function isTextLike(spec: { type: AttributeType }): boolean {
  return TYPES[spec.type].fullText;
}

/** Whether every value of `from` is a value of `to` without conversion loss. */
export function isWidening(from: AttributeType, to: AttributeType): boolean {
  return from === to || TYPES[from].widensTo.includes(to);
}

/**
 * Whether a type change keeps one stored value (architecture.md "the registry … which
 * conversions to other types are lossless"; issue 4: lossy conversions are destructive).
 * A widening keeps every value. Any other pair keeps a value only when converting it back
 * gives the original: datetime → date drops the time, text "00501" → integer 501 drops
 * the zeros, and such values count as lost even though they do not become null.
 * `value` is the API value under `from`; `converted` the parsed value under `to`.
 */
export function keepsValue(from: AttributeSpec, to: AttributeSpec, value: unknown, converted: unknown): boolean {
  if (isWidening(from.type, to.type)) return true;
  const back = TYPES[from.type].convertFrom(converted);
  if (back === undefined || back === null) return false;
  const parsed = TYPES[from.type].parse(back, from);
  return sameJson(parsed.ok ? parsed.value : back, value);
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
