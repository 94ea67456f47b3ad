import type { AttributeSpec } from '../attribute.js';
import type { FieldSchemas, Parsed } from './type-def.js';
import { matchesPattern, PATTERN_TEST_MS } from './pattern.js';

/** Constraint checks shared by several types, so each rule is written once. */

export const ok = (value: unknown): Parsed => ({ ok: true, value });
export const fail = (message: string): Parsed => ({ ok: false, message });

export const LENGTH_FIELDS: FieldSchemas = {
  minLength: { type: 'integer', minimum: 0, description: 'Minimum number of characters.' },
  maxLength: { type: 'integer', minimum: 1, description: 'Maximum number of characters.' },
  pattern: { type: 'string', description: 'A regular expression (JavaScript syntax) every value must match.' },
};

export const RANGE_FIELDS: FieldSchemas = {
  min: { type: 'number', description: 'Smallest allowed value.' },
  max: { type: 'number', description: 'Largest allowed value.' },
};

export const OPTIONS_FIELD: FieldSchemas = {
  options: {
    type: 'array',
    minItems: 1,
    uniqueItems: true,
    items: { type: 'string', minLength: 1 },
    description: 'The allowed values.',
  },
};

export function checkLength(value: string, spec: AttributeSpec): Parsed {
  // Count code points, not UTF-16 units, so an emoji is one character. Counted only when a
  // bound is set, and without spreading the string into an array (one per text value of a
  // 10,000-record bulk-create was a real share of its time).
  const length = spec.minLength === undefined && spec.maxLength === undefined ? 0 : codePointLength(value);
  if (spec.minLength !== undefined && length < spec.minLength) {
    return fail(`must be at least ${spec.minLength} characters long (got ${length})`);
  }
  if (spec.maxLength !== undefined && length > spec.maxLength) {
    return fail(`must be at most ${spec.maxLength} characters long (got ${length})`);
  }
  if (spec.pattern !== undefined) {
    const matches = matchesPattern(spec.pattern, value);
    if (matches === 'slow') return fail(`could not be checked against the pattern ${spec.pattern} in time (${PATTERN_TEST_MS} ms)`);
    if (matches === false) return fail(`must match the pattern ${spec.pattern}`);
  }
  return ok(value);
}

/** `[...value].length` without the array: a surrogate pair is one code point, a lone surrogate one too. */
export function codePointLength(value: string): number {
  let n = value.length;
  for (let i = 0; i < value.length - 1; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = value.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

export function checkRange(value: number, spec: AttributeSpec): Parsed {
  if (spec.min !== undefined && value < spec.min) return fail(`must be at least ${spec.min} (got ${value})`);
  if (spec.max !== undefined && value > spec.max) return fail(`must be at most ${spec.max} (got ${value})`);
  return ok(value);
}

/** A string value checked against the type's shape, then the length constraints. */
export function parseString(value: unknown, spec: AttributeSpec, noun: string, shape?: (s: string) => boolean): Parsed {
  if (typeof value !== 'string') return fail(`must be ${noun}`);
  if (shape && !shape(value)) return fail(`must be ${noun} (got ${JSON.stringify(truncate(value))})`);
  return checkLength(value, spec);
}

/**
 * Whitespace around a value or a control character anywhere in it (C0, DEL, C1). URL
 * parsing silently strips such characters (and tabs and newlines inside), so a check that
 * only asks `new URL` would store `"  https://x.y/a\n"` as sent; for url and email they
 * mean the value is not one.
 */
const STRAY = /^\s|\s$|[\u0000-\u001f\u007f-\u009f]/;
export function hasStrayCharacters(s: string): boolean {
  return STRAY.test(s);
}

export function truncate(s: string, max = 40): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** Value → text, for conversions into text-like types. */
export function stringify(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return undefined;
  return JSON.stringify(value);
}

/** A list of ids (relation or document with multiple: true) or one id. */
export function parseIds(value: unknown, spec: AttributeSpec, noun: string): Parsed {
  if (spec.multiple) {
    const list = Array.isArray(value) ? value : null;
    if (!list || !list.every((v) => typeof v === 'string' && v.length > 0)) return fail(`must be a list of ${noun} ids`);
    if (new Set(list).size !== list.length) return fail('must not list the same id twice');
    return ok(list);
  }
  if (noun === 'document' && Array.isArray(value)) {
    // service-interface.md error table: "the document attribute takes a single file".
    return { ok: false, message: 'takes a single file: give one document id, not a list', code: 'DOCUMENT_MULTIPLE_NOT_ALLOWED' };
  }
  if (typeof value !== 'string' || value.length === 0) return fail(`must be one ${noun} id`);
  return ok(value);
}
