import { describe, expect, test } from 'vitest';
import { validateAttributeInput, validateDeclaration, validateObjectName, type Diagnostic } from '../../engine/declaration/validate.js';
import { closest, typoDistance } from '../../engine/declaration/suggest.js';

/** A declaration with one object `deal` holding the given attributes. */
const withAttrs = (attributes: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  validateDeclaration({ objects: { deal: { attributes }, ...extra }, views: {} });

const errors = (r: { diagnostics: Diagnostic[] }) => r.diagnostics.filter((d) => d.severity === 'error');
const only = (r: { diagnostics: Diagnostic[] }): Diagnostic => {
  const e = errors(r);
  expect(e, JSON.stringify(r.diagnostics)).toHaveLength(1);
  return e[0]!;
};

describe('validateDeclaration', () => {
  test('a valid declaration has a value with sizes in bytes and no diagnostics', () => {
    const r = withAttrs({
      title: { type: 'text', required: true, maxLength: 10 },
      contract: { type: 'document', accepts: ['application/pdf', 'image/*'], maxFileSize: '10MB' },
      scan: { type: 'document', maxFileSize: 2048 },
    });
    expect(r.diagnostics).toEqual([]);
    expect(r.value?.objects['deal']?.attributes['contract']?.maxFileSize).toBe(10 * 1024 * 1024);
    expect(r.value?.objects['deal']?.attributes['scan']?.maxFileSize).toBe(2048);
    expect(r.value?.views).toEqual({});
  });

  test('unknown type suggests the near miss and the alias', () => {
    expect(only(withAttrs({ a: { type: 'integr' } }))).toMatchObject({
      path: ['objects', 'deal', 'attributes', 'a', 'type'],
      message: 'Attribute "a" of object "deal" has an unknown type "integr"',
      suggestion: 'integer',
      code: 'SCHEMA_VALIDATION_FAILED',
    });
    expect(only(withAttrs({ a: { type: 'string' } })).suggestion).toBe('text');
    expect(only(withAttrs({ a: { type: 'strng' } })).suggestion).toBe('text');
    expect(only(withAttrs({ a: { type: 'enum', options: ['x'] } })).suggestion).toBe('select');
    expect(only(withAttrs({ a: { type: 'timestamp' } })).suggestion).toBe('datetime');
  });

  test('unknown field suggests the near miss and points at the key', () => {
    expect(only(withAttrs({ a: { type: 'text', requird: true } }))).toMatchObject({
      path: ['objects', 'deal', 'attributes', 'a', 'requird'],
      suggestion: 'required',
      on: 'key',
    });
  });

  test('a field of another type is refused with the types it belongs to', () => {
    expect(only(withAttrs({ a: { type: 'text', options: ['x'] } })).message).toBe(
      'Attribute "a" of object "deal": "options" does not apply to a text attribute (it applies to select, multiselect)',
    );
  });

  test('name rules carry the spec codes', () => {
    expect(only(validateDeclaration({ objects: { Deal: { attributes: {} } } }))).toMatchObject({
      code: 'SCHEMA_INVALID_OBJECT_NAME',
      suggestion: 'deal',
      on: 'key',
    });
    expect(only(validateDeclaration({ objects: { meeting: { attributes: {} } } })).code).toBe('SCHEMA_RESERVED_OBJECT_NAME');
    expect(only(withAttrs({ Amount: { type: 'number' } }))).toMatchObject({ code: 'SCHEMA_INVALID_ATTRIBUTE_NAME', suggestion: 'amount' });
    const system = only(withAttrs({ created_at: { type: 'datetime' } }));
    expect(system.code).toBe('SCHEMA_INVALID_ATTRIBUTE_NAME');
    expect(system.message).toContain('system attribute');
  });

  test('select and multiselect need non-empty, unique options; relation needs a target', () => {
    expect(only(withAttrs({ s: { type: 'select' } })).message).toContain('needs "options"');
    expect(only(withAttrs({ s: { type: 'multiselect', options: [] } })).message).toContain('"options" must not be empty');
    expect(only(withAttrs({ s: { type: 'select', options: ['a', 'b', 'a'] } })).message).toContain('lists "a" twice');
    expect(only(withAttrs({ r: { type: 'relation' } })).message).toContain('needs "target"');
  });

  test('document accepts entries and sizes', () => {
    expect(only(withAttrs({ d: { type: 'document', accepts: ['pdf'] } })).message).toContain('accepts entry "pdf" must be a MIME type');
    expect(only(withAttrs({ d: { type: 'document', maxFileSize: '10 parsecs' } })).path).toEqual(['objects', 'deal', 'attributes', 'd', 'maxFileSize']);
    expect(only(withAttrs({ d: { type: 'document', maxFileSize: '0MB' } })).message).toContain('"maxFileSize" must be a number of bytes');
    expect(errors(withAttrs({ d: { type: 'document', maxFileSize: '512KB', accepts: ['image/*'] } }))).toEqual([]);
  });

  test('min <= max, minLength <= maxLength, patterns compile, unique only where the type allows', () => {
    expect(only(withAttrs({ n: { type: 'number', min: 5, max: 1 } })).message).toBe('Attribute "n" of object "deal": "min" (5) is greater than "max" (1)');
    expect(only(withAttrs({ t: { type: 'text', minLength: 5, maxLength: 2 } })).path).toEqual(['objects', 'deal', 'attributes', 't', 'maxLength']);
    expect(only(withAttrs({ t: { type: 'text', pattern: '([a-z' } })).message).toContain('"pattern" is not a valid regular expression');
    expect(only(withAttrs({ b: { type: 'boolean', unique: true } })).message).toBe('Attribute "b" of object "deal": "unique" is not available for boolean attributes');
    expect(only(withAttrs({ i: { type: 'integer', min: 0.5 } })).message).toContain('whole number');
  });

  test('defaults must pass the attribute\u2019s own rules', () => {
    expect(only(withAttrs({ s: { type: 'select', options: ['a', 'b'], default: 'c' } })).message).toBe(
      'Attribute "s" of object "deal": default "c" must be one of "a", "b"',
    );
    expect(only(withAttrs({ t: { type: 'text', maxLength: 3, default: 'toolong' } })).message).toContain('must be at most 3 characters');
    expect(only(withAttrs({ d: { type: 'date', default: '2023-02-29' } })).message).toContain('must be a date');
    expect(only(withAttrs({ r: { type: 'relation', target: 'deal', default: 'x' } })).message).toContain('cannot have a default');
    expect(errors(withAttrs({ n: { type: 'integer', min: 0, default: 3 }, b: { type: 'boolean', default: false } }))).toEqual([]);
  });

  test('a relation target not declared here is a warning, not an error', () => {
    const r = withAttrs({ company: { type: 'relation', target: 'compny' } }, { company: { attributes: {} } });
    expect(errors(r)).toEqual([]);
    expect(r.value).toBeDefined();
    expect(r.diagnostics).toEqual([
      expect.objectContaining({ severity: 'warning', suggestion: 'company', path: ['objects', 'deal', 'attributes', 'company', 'target'] }),
    ]);
    expect(r.diagnostics[0]!.message).toContain('must exist on the instance');
  });

  test('renamedFrom must be a valid name that is no longer declared', () => {
    expect(only(withAttrs({ a: { type: 'text', renamedFrom: 'B' } })).code).toBe('SCHEMA_INVALID_ATTRIBUTE_NAME');
    expect(only(withAttrs({ a: { type: 'text', renamedFrom: 'b' }, b: { type: 'text' } })).message).toContain('which is still declared');
    expect(errors(withAttrs({ a: { type: 'text', renamedFrom: 'old_a' } }))).toEqual([]);
  });

  test('views name a declared object and its attributes', () => {
    const decl = (view: Record<string, unknown>) =>
      validateDeclaration({ objects: { deal: { attributes: { stage: { type: 'select', options: ['a'] }, amount: { type: 'number' } } } }, views: { v: view } });
    expect(only(decl({ object: 'dael' }))).toMatchObject({ path: ['views', 'v', 'object'], suggestion: 'deal' });
    expect(only(decl({ object: 'deal', columns: ['stage', 'amout'] }))).toMatchObject({ path: ['views', 'v', 'columns', 1], suggestion: 'amount' });
    expect(only(decl({ object: 'deal', filter: { and: [{ stag: 'a' }] } }))).toMatchObject({
      path: ['views', 'v', 'filter', 'and', 0, 'stag'],
      suggestion: 'stage',
      message: 'View "v": object "deal" has no attribute "stag"',
    });
    expect(only(decl({ object: 'deal', filter: { amount: { gtt: 1 } } }))).toMatchObject({ suggestion: 'gt' });
    expect(only(decl({ object: 'deal', sort: [{ attribute: 'amount', direction: 'up' }] })).message).toContain('must be one of asc, desc');
    expect(only(decl({ object: 'deal', filter: { stage: { in: ['a', 'b'] } } }))).toMatchObject({
      path: ['views', 'v', 'filter', 'stage', 'in', 1],
      message: 'View "v": the filter on "stage" compares with "b", but "stage" must be one of "a"',
    });
    expect(only(decl({ object: 'deal', filter: { or: [{ amount: { gte: 'ten' } }] } })).path).toEqual(['views', 'v', 'filter', 'or', 0, 'amount', 'gte']);
    expect(errors(decl({ object: 'deal', filter: { stage: { in: ['a'] } }, sort: [{ attribute: 'created_at', direction: 'desc' }], columns: ['id', 'stage'] }))).toEqual([]);
  });

  test("a view's filter operands follow the same rule as record search (engine/model/filter-operand.ts)", () => {
    const decl = (filter: Record<string, unknown>) =>
      validateDeclaration({
        objects: { deal: { attributes: { at: { type: 'datetime' }, done: { type: 'boolean' }, tags: { type: 'multiselect', options: ['x'] }, amount: { type: 'number', min: 0 } } } },
        views: { v: { object: 'deal', filter } },
      });
    expect(only(decl({ at: { gte: '2026-06-01' } }))).toMatchObject({ path: ['views', 'v', 'filter', 'at', 'gte'], message: expect.stringContaining('"at" must be an ISO 8601 datetime') });
    expect(only(decl({ done: { gt: false } })).message).toBe('View "v": gt does not apply to "done" (boolean): use eq, ne, in, nin or isNull');
    expect(only(decl({ tags: { contains: 'y' } })).path).toEqual(['views', 'v', 'filter', 'tags', 'contains']);
    expect(errors(decl({ at: { gte: '2026-06-01T00:00:00+02:00' }, done: true, tags: 'x', amount: { lt: -1 } }))).toEqual([]);
    // System fields compare by their own types, as search does (a view search would refuse).
    expect(errors(decl({ created_at: { gt: 'yesterday' }, version: { gt: 'abc' } })).map((d) => d.path)).toEqual([
      ['views', 'v', 'filter', 'created_at', 'gt'],
      ['views', 'v', 'filter', 'version', 'gt'],
    ]);
    expect(errors(decl({ created_at: { gt: '2026-01-01T00:00:00Z' }, version: { gte: 2 }, id: { ne: 'x' } }))).toEqual([]);
  });

  test('every problem is reported in one run', () => {
    const r = validateDeclaration({
      objects: { Bad: { attributes: { x: { type: 'nope' } } }, ok: { attributes: { y: { type: 'select' } } } },
      views: { v: { object: 'missing' } },
    });
    expect(errors(r).length).toBe(4);
    expect(r.value).toBeUndefined();
  });

  test('an attribute written as a bare type gets a fix', () => {
    const d = only(withAttrs({ a: 'string' }));
    expect(d.message).toBe('Attribute "a" of object "deal" must be a mapping of its fields, not "string"');
    expect(d.fix).toBe('Write it as { type: text }.');
  });
});

test('wrong shapes say which object, view or sort entry', () => {
  expect(only(validateDeclaration({ objects: { a: null } }))).toMatchObject({ message: 'Object "a" must be a mapping of its fields', on: 'key' });
  const sort = only(validateDeclaration({ objects: { a: { attributes: { n: { type: 'text' } } } }, views: { v: { object: 'a', sort: ['n'] } } }));
  expect(sort).toMatchObject({ message: 'View "v": sort entries must be mappings, not "n"', fix: 'Write it as { attribute: n, direction: asc }.' });
});

describe('validateAttributeInput', () => {
  test('a full input needs a type and returns the spec with its name and bytes', () => {
    expect(validateAttributeInput('file', { type: 'document', maxFileSize: '1KB' }).value).toEqual({ name: 'file', type: 'document', maxFileSize: 1024 });
    expect(only(validateAttributeInput('x', {}))).toMatchObject({ path: [], message: 'Attribute "x" has no type (one of text, number, integer, boolean, date, datetime, email, url, select, multiselect, json, relation, document)' });
  });
  test('paths are relative to the body; partial inputs need no type', () => {
    expect(only(validateAttributeInput('n', { type: 'number', min: 3, max: 1 }))).toMatchObject({ path: ['max'] });
    expect(validateAttributeInput('n', { maxLength: 5 }, { partial: true }).diagnostics).toEqual([]);
    expect(only(validateAttributeInput('n', { maxLenght: 5 }, { partial: true }))).toMatchObject({ path: ['maxLenght'], suggestion: 'maxLength' });
  });
  test('a bad attribute name carries the spec code', () => {
    expect(only(validateAttributeInput('Bad', { type: 'text' })).code).toBe('SCHEMA_INVALID_ATTRIBUTE_NAME');
  });
});

test('validateObjectName uses the name rules and suggests', () => {
  expect(validateObjectName('deal')).toEqual([]);
  expect(validateObjectName('My Deal')[0]).toMatchObject({ code: 'SCHEMA_INVALID_OBJECT_NAME', suggestion: 'my_deal' });
  expect(validateObjectName('artifact')[0]?.code).toBe('SCHEMA_RESERVED_OBJECT_NAME');
});

describe('did you mean', () => {
  test('a swap of two neighbouring letters is one typo: mni → min', () => {
    expect(only(withAttrs({ n: { type: 'integer', mni: 1 } }))).toMatchObject({ path: ['objects', 'deal', 'attributes', 'n', 'mni'], suggestion: 'min' });
    expect(closest('mni', ['min', 'max'])).toBe('min');
    expect(typoDistance('mni', 'min')).toBe(1);
    expect(typoDistance('kitten', 'sitting')).toBe(3);
  });

  test('ties go to the shared start: direction dsc → desc, not asc', () => {
    const r = validateDeclaration({ objects: { deal: { attributes: { n: { type: 'text' } } } }, views: { v: { object: 'deal', sort: [{ attribute: 'n', direction: 'dsc' }] } } });
    expect(only(r)).toMatchObject({ path: ['views', 'v', 'sort', 0, 'direction'], suggestion: 'desc' });
    expect(closest('ac', ['desc', 'asc'])).toBe('asc');
  });

  test('a select or multiselect default near an option suggests it', () => {
    expect(only(withAttrs({ s: { type: 'select', options: ['lead', 'won'], default: 'leed' } }))).toMatchObject({
      path: ['objects', 'deal', 'attributes', 's', 'default'],
      suggestion: 'lead',
    });
    expect(only(withAttrs({ m: { type: 'multiselect', options: ['red', 'green'], default: ['red', 'gren'] } }))).toMatchObject({ suggestion: 'green' });
    expect(only(withAttrs({ s: { type: 'select', options: ['lead', 'won'], default: 'zzzzzz' } })).suggestion).toBeUndefined();
  });
});

test('a default is not checked against options that are themselves wrong', () => {
  // The default is a string (a select's value type, which the JSON Schema checks): only the options are wrong.
  const r = withAttrs({ s: { type: 'select', options: [1, 2], default: '1' } });
  expect(errors(r).map((d) => d.path.slice(4))).toEqual([['options', 0], ['options', 1]]);
  expect(errors(r).some((d) => /default/.test(d.message))).toBe(false);
  // Options that are fine still check the default.
  expect(only(withAttrs({ s: { type: 'select', options: ['a'], default: 'b' } })).path).toEqual(['objects', 'deal', 'attributes', 's', 'default']);
});
