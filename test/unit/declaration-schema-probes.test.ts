import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, test } from 'vitest';
import { validateDeclaration } from '../../engine/declaration/validate.js';

/**
 * contract.md §2: the published JSON Schema "is never looser than `validate` on names
 * (reserved objects, system attributes) and offers each type only its own fields". Each
 * probe is one declaration; the test compares `validate`'s verdict with what an editor's
 * validator (plain ajv on schemas/declaration.schema.json, no schemasync code) says. The
 * only probes allowed to differ are rules JSON Schema cannot state (a comparison between
 * two values of the same document, a reference to another object); they are listed, so a
 * new disagreement fails here.
 */
const schema = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'schemas', 'declaration.schema.json'), 'utf8')) as object;
const editor = new Ajv({ strict: false, allErrors: true }).compile(schema);

const attr = (a: Record<string, unknown>, name = 'a') => ({ objects: { thing: { attributes: { [name]: a } } } });

interface Probe {
  what: string;
  declaration: unknown;
  /** Why JSON Schema cannot say what validate says; only then may the verdicts differ. */
  beyondJsonSchema?: string;
}

const PROBES: Probe[] = [
  { what: 'a valid text attribute', declaration: attr({ type: 'text', maxLength: 10 }) },
  { what: 'system attribute id', declaration: attr({ type: 'text' }, 'id') },
  { what: 'system attribute created_at', declaration: attr({ type: 'datetime' }, 'created_at') },
  { what: 'system attribute version', declaration: attr({ type: 'integer' }, 'version') },
  { what: 'filter combinator "and" as an attribute', declaration: attr({ type: 'text' }, 'and') },
  { what: 'reserved object name skill', declaration: { objects: { skill: { attributes: { a: { type: 'text' } } } } } },
  { what: 'reserved object name meeting', declaration: { objects: { meeting: { attributes: { a: { type: 'text' } } } } } },
  { what: 'an upper-case object name', declaration: { objects: { Deal: { attributes: { a: { type: 'text' } } } } } },
  { what: 'a 64-character attribute name', declaration: attr({ type: 'text' }, `a${'b'.repeat(63)}`) },
  { what: 'minLength on a boolean', declaration: attr({ type: 'boolean', minLength: 1 }) },
  { what: 'options on a text', declaration: attr({ type: 'text', options: ['x'] }) },
  { what: 'min on a date', declaration: attr({ type: 'date', min: 1 }) },
  { what: 'target on a document', declaration: attr({ type: 'document', target: 'thing' }) },
  { what: 'a typo in the type', declaration: attr({ type: 'strng' }) },
  { what: 'a typo in a field', declaration: attr({ type: 'text', maxLenght: 3 }) },
  { what: 'a select without options', declaration: attr({ type: 'select' }) },
  { what: 'a relation without a target', declaration: attr({ type: 'relation' }) },
  { what: 'a boolean default "yes"', declaration: attr({ type: 'boolean', default: 'yes' }) },
  { what: 'an integer default 1.5', declaration: attr({ type: 'integer', default: 1.5 }) },
  { what: 'a multiselect default that is not a list', declaration: attr({ type: 'multiselect', options: ['a'], default: 'a' }) },
  { what: 'a date default in another format', declaration: attr({ type: 'date', default: '24/11/2026' }) },
  { what: 'unique on a json attribute', declaration: attr({ type: 'json', unique: true }) },
  { what: 'unique on a boolean attribute', declaration: attr({ type: 'boolean', unique: true }) },
  { what: 'a valid select with its default', declaration: attr({ type: 'select', options: ['a', 'b'], default: 'a' }) },
  {
    what: 'min greater than max',
    declaration: attr({ type: 'number', min: 5, max: 1 }),
    beyondJsonSchema: 'compares two values of the same attribute (JSON Schema has no $data in draft-07 editors)',
  },
  {
    what: 'a default outside the options',
    declaration: attr({ type: 'select', options: ['a', 'b'], default: 'c' }),
    beyondJsonSchema: 'the allowed values are the document’s own options list',
  },
  {
    what: 'minLength greater than maxLength',
    declaration: attr({ type: 'text', minLength: 5, maxLength: 2 }),
    beyondJsonSchema: 'compares two values of the same attribute',
  },
  {
    what: 'a view sorted by an attribute its object lacks',
    declaration: { ...attr({ type: 'text' }), views: { v: { object: 'thing', sort: [{ attribute: 'nosuch' }] } } },
    beyondJsonSchema: 'needs the attributes of the object the view names',
  },
];

describe('the published JSON Schema and validate agree', () => {
  test('at least the 26 probes of the issue', () => expect(PROBES.length).toBeGreaterThanOrEqual(26));

  test.each(PROBES)('$what', ({ declaration, beyondJsonSchema }) => {
    const validateAccepts = validateDeclaration(declaration).value !== undefined;
    const editorAccepts = editor(declaration);
    if (beyondJsonSchema) {
      // Listed as beyond JSON Schema: validate refuses, the editor cannot.
      expect(validateAccepts).toBe(false);
      expect(editorAccepts).toBe(true);
    } else {
      expect(editorAccepts, JSON.stringify(editor.errors)).toBe(validateAccepts);
    }
  });

  test('the schema is never looser than validate on names', () => {
    const names = PROBES.filter((p) => /system attribute|reserved|combinator|object name|attribute name/.test(p.what));
    expect(names.length).toBeGreaterThanOrEqual(8);
    for (const p of names) expect(p.beyondJsonSchema, p.what).toBeUndefined();
  });
});

test('every property the schema defines has a description (what an editor shows on hover)', () => {
  const missing: string[] = [];
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${path}/${i}`));
    if (typeof node !== 'object' || node === null) return;
    const o = node as Record<string, unknown>;
    if (typeof o['properties'] === 'object' && o['properties'] !== null && !path.includes('/if')) {
      for (const [k, v] of Object.entries(o['properties'] as Record<string, Record<string, unknown>>)) {
        if (typeof v['description'] !== 'string' || v['description'].length === 0) missing.push(`${path}/properties/${k}`);
      }
    }
    for (const [k, v] of Object.entries(o)) walk(v, `${path}/${k}`);
  };
  walk(schema, '#');
  expect(missing).toEqual([]);
});
