import { describe, expect, it } from 'vitest';
import type { AttributeSpec } from '../../engine/model/attribute.js';
import { ALL_ATTRIBUTE_FIELDS, ATTRIBUTE_TYPES } from '../../engine/model/attribute.js';
import { attributeFieldSchemas, fieldsOfType } from '../../engine/declaration/json-schema.js';
import { codePointLength } from '../../engine/model/types/checks.js';
import { TYPES, holdsDocuments, isMultiValued, isTextLike, isWidening, parseValue, relationTarget } from '../../engine/model/types/registry.js';
import { attributeChanges } from '../../engine/plan/compare.js';
import { suggestType } from '../../engine/declaration/suggest.js';
import { CODECS } from '../../engine/store/sqlite/codecs.js';

const spec = (s: Partial<AttributeSpec> & Pick<AttributeSpec, 'type'>): AttributeSpec => ({ name: 'a', ...s });
const okValue = (s: AttributeSpec, v: unknown) => {
  const r = parseValue(s, v);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(v)} to pass: ${r.message}`);
  return r.value;
};
const message = (s: AttributeSpec, v: unknown) => {
  const r = parseValue(s, v);
  if (r.ok) throw new Error(`expected ${JSON.stringify(v)} to fail`);
  return r.message;
};

describe('attribute-type registry', () => {
  it('defines every contract type', () => {
    expect(Object.keys(TYPES).sort()).toEqual([...ATTRIBUTE_TYPES].sort());
  });

  it('checks required on null and undefined, and lets optional nulls through', () => {
    expect(message(spec({ type: 'text', required: true }), null)).toBe('is required');
    expect(message(spec({ type: 'integer', required: true }), undefined)).toBe('is required');
    expect(okValue(spec({ type: 'text' }), null)).toBeNull();
  });

  it('text: lengths count characters, not UTF-16 units, and patterns apply', () => {
    expect(okValue(spec({ type: 'text', maxLength: 2 }), '😀😀')).toBe('😀😀');
    expect(message(spec({ type: 'text', maxLength: 2 }), 'abc')).toMatch(/at most 2 characters/);
    expect(message(spec({ type: 'text', minLength: 2 }), 'a')).toMatch(/at least 2/);
    expect(message(spec({ type: 'text', pattern: '^[A-Z]+$' }), 'abc')).toMatch(/pattern/);
    expect(message(spec({ type: 'text' }), 12)).toBe('must be a string');
  });

  it('text: the length count agrees with code-point iteration, lone surrogates and all', () => {
    for (const s of ['', 'a', '😀', 'a😀b', '\ud83d', '\ude00x', 'x\ud83d', '\ud83d\ud83d\ude00', '👍🏽', 'é']) {
      expect(codePointLength(s)).toBe([...s].length);
    }
    expect(message(spec({ type: 'text', maxLength: 2 }), '😀😀😀')).toBe('must be at most 2 characters long (got 3)');
    expect(message(spec({ type: 'text', minLength: 3 }), '😀😀')).toBe('must be at least 3 characters long (got 2)');
  });

  it('number and integer: finite numbers, safe integers, ranges', () => {
    expect(okValue(spec({ type: 'number', min: 0 }), 1.5)).toBe(1.5);
    expect(message(spec({ type: 'number' }), '1.5')).toBe('must be a number');
    expect(message(spec({ type: 'number' }), Number.NaN)).toBe('must be a number');
    expect(message(spec({ type: 'number', min: 0 }), -1)).toMatch(/at least 0/);
    expect(message(spec({ type: 'integer' }), 1.5)).toBe('must be an integer');
    expect(message(spec({ type: 'integer' }), 2 ** 60)).toBe('must be an integer');
    expect(message(spec({ type: 'integer', max: 10 }), 11)).toMatch(/at most 10/);
  });

  it('date is a real calendar day; datetime needs a zone and is stored in UTC', () => {
    expect(okValue(spec({ type: 'date' }), '2024-02-29')).toBe('2024-02-29');
    expect(message(spec({ type: 'date' }), '2023-02-29')).toMatch(/YYYY-MM-DD/);
    expect(message(spec({ type: 'date' }), '2024-1-1')).toMatch(/YYYY-MM-DD/);
    expect(okValue(spec({ type: 'datetime' }), '2024-05-01T11:30:00+02:00')).toBe('2024-05-01T09:30:00.000Z');
    expect(message(spec({ type: 'datetime' }), '2024-05-01T09:30:00')).toMatch(/zone/);
  });

  it('date: years 0001..9999, the two-digit years included (not read as 19xx)', () => {
    for (const d of ['0001-01-01', '0050-06-15', '0099-12-31', '0100-01-01', '9999-12-31']) expect(okValue(spec({ type: 'date' }), d)).toBe(d);
    expect(okValue(spec({ type: 'date' }), '0004-02-29')).toBe('0004-02-29');
    expect(message(spec({ type: 'date' }), '0001-02-29')).toMatch(/YYYY-MM-DD/);
    expect(message(spec({ type: 'date' }), '0000-01-01')).toMatch(/0001 to 9999/);
    expect(TYPES.date.convertFrom('0050-03-04T10:00:00Z')).toBe('0050-03-04');
    expect(TYPES.date.convertFrom('+010000-01-01T00:00:00.000Z')).toBeUndefined();
  });

  it('datetime: the UTC form stays within 0001..9999, so the stored text is always 24 characters', () => {
    const dt = spec({ type: 'datetime' });
    expect(message(dt, '9999-12-31T23:30:00-02:00')).toMatch(/between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z/);
    expect(message(dt, '0001-01-01T00:30:00+01:00')).toMatch(/between 0001/);
    expect(message(dt, '9999-12-31T24:00:00Z')).toMatch(/between 0001/);
    expect(okValue(dt, '0100-01-01T00:30:00+01:00')).toBe('0099-12-31T23:30:00.000Z');
    expect(okValue(dt, '0050-06-01T00:30:00+01:00')).toBe('0050-05-31T23:30:00.000Z');
    expect(okValue(dt, '0001-01-01T00:00:00Z')).toBe('0001-01-01T00:00:00.000Z');
    expect(okValue(dt, '9999-12-31T23:59:59.999Z')).toBe('9999-12-31T23:59:59.999Z');
    expect(okValue(dt, '9999-12-31T21:30:00-02:00')).toBe('9999-12-31T23:30:00.000Z');
    // Every value it stores parses back to itself (a write of a read value never fails).
    for (const v of ['0099-12-31T23:30:00.000Z', '0050-05-31T23:30:00.000Z', '9999-12-31T23:30:00.000Z']) {
      expect(okValue(dt, v)).toBe(v);
      expect(v).toHaveLength(24);
    }
    expect(TYPES.datetime.convertFrom('0050-01-02')).toBe('0050-01-02T00:00:00.000Z');
    expect(TYPES.datetime.convertFrom('9999-12-31T23:30:00-02:00')).toBeUndefined();
  });

  it('url and email: whitespace around the value or a control character anywhere is refused, not stored', () => {
    const u = spec({ type: 'url' });
    for (const bad of ['  https://x.y/a  ', 'https://x.y/a\n', '\thttps://x.y/a', 'https://x.y/\u0000', 'https://x.y/a\u007f', 'https://x.\ny/a', 'https://x.y/a\u00a0']) {
      expect(message(u, bad), JSON.stringify(bad)).toMatch(/no whitespace around it and no control characters/);
      expect(TYPES.url.convertFrom(bad), JSON.stringify(bad)).toBeUndefined();
    }
    expect(okValue(u, 'https://x.y/a')).toBe('https://x.y/a');
    const e = spec({ type: 'email' });
    for (const bad of [' a@b.co', 'a@b.co\n', 'a\u0000@b.co', 'a@b.co\u007f', 'a\u0085b@c.co']) {
      expect(message(e, bad), JSON.stringify(bad)).toMatch(/email/);
    }
  });

  it('email and url: pragmatic shapes; url only http(s)', () => {
    expect(okValue(spec({ type: 'email' }), 'a@b.co')).toBe('a@b.co');
    expect(message(spec({ type: 'email' }), 'a@b')).toMatch(/email/);
    expect(okValue(spec({ type: 'url' }), 'https://example.com/x')).toBe('https://example.com/x');
    expect(message(spec({ type: 'url' }), 'javascript:alert(1)')).toMatch(/http/);
  });

  it('select and multiselect: only listed options, no repeats', () => {
    const s = spec({ type: 'select', options: ['lead', 'won'] });
    expect(okValue(s, 'won')).toBe('won');
    expect(message(s, 'lost')).toBe('must be one of "lead", "won"');
    const m = spec({ type: 'multiselect', options: ['a', 'b'] });
    expect(okValue(m, ['a', 'b'])).toEqual(['a', 'b']);
    expect(message(m, ['a', 'c'])).toMatch(/not "c"/);
    expect(message(m, ['a', 'a'])).toMatch(/twice/);
  });

  it('relation and document: one id, or a list of distinct ids when multiple', () => {
    expect(okValue(spec({ type: 'relation', target: 'company' }), 'r1')).toBe('r1');
    expect(message(spec({ type: 'relation', target: 'company' }), ['r1'])).toMatch(/one record id/);
    expect(okValue(spec({ type: 'relation', target: 'c', multiple: true }), ['r1', 'r2'])).toEqual(['r1', 'r2']);
    expect(message(spec({ type: 'document', multiple: true }), ['d', 'd'])).toMatch(/twice/);
  });

  it('round-trips values through the column encoding', () => {
    const cases: [AttributeSpec, unknown][] = [
      [spec({ type: 'boolean' }), true],
      [spec({ type: 'json' }), { a: [1, 'x'] }],
      [spec({ type: 'multiselect', options: ['a'] }), ['a']],
      [spec({ type: 'relation', target: 't', multiple: true }), ['x', 'y']],
      [spec({ type: 'integer' }), 7],
    ];
    for (const [s, v] of cases) {
      const codec = CODECS[s.type];
      expect(codec.decode(codec.encode(v, s), s)).toEqual(v);
    }
  });

  it('knows which type changes are lossless', () => {
    expect(isWidening('integer', 'number')).toBe(true);
    expect(isWidening('select', 'text')).toBe(true);
    expect(isWidening('number', 'integer')).toBe(false);
    expect(isWidening('text', 'integer')).toBe(false);
  });

  it('converts stored values for a type change, refusing what would be lost', () => {
    expect(TYPES.integer.convertFrom('42')).toBe(42);
    expect(TYPES.integer.convertFrom('4.2')).toBeUndefined();
    expect(TYPES.number.convertFrom('4.2')).toBe(4.2);
    expect(TYPES.text.convertFrom(3)).toBe('3');
    expect(TYPES.datetime.convertFrom('2024-01-02')).toBe('2024-01-02T00:00:00.000Z');
    expect(TYPES.boolean.convertFrom('yes')).toBe(true);
    expect(TYPES.relation.convertFrom('x')).toBeUndefined();
  });
});

describe('type behaviour lives in the registry (one file per type)', () => {
  it('what each type is, as the planner, the validator and the store ask it', () => {
    const facts = Object.fromEntries(
      ATTRIBUTE_TYPES.map((t) => [t, [relationTarget({ type: t, target: 'x' }) ?? '-', holdsDocuments({ type: t }), isTextLike({ type: t }), isMultiValued({ type: t }), isMultiValued({ type: t, multiple: true })]]),
    );
    expect(facts).toEqual({
      text: ['-', false, true, false, false],
      number: ['-', false, false, false, false],
      integer: ['-', false, false, false, false],
      boolean: ['-', false, false, false, false],
      date: ['-', false, false, false, false],
      datetime: ['-', false, false, false, false],
      email: ['-', false, true, false, false],
      url: ['-', false, true, false, false],
      select: ['-', false, true, false, false],
      multiselect: ['-', false, true, true, true],
      json: ['-', false, false, true, true],
      relation: ['x', false, false, false, true],
      document: ['-', true, false, false, true],
    });
  });

  it('a spelled-out implied field is no change, another value is', () => {
    expect(attributeChanges({ name: 'c', type: 'relation', target: 'company' }, { name: 'c', type: 'relation', target: 'company', multiple: false })).toEqual([]);
    expect(attributeChanges({ name: 'f', type: 'document' }, { name: 'f', type: 'document', maxFileSize: 25 * 1024 * 1024 })).toEqual([]);
    expect(attributeChanges({ name: 'f', type: 'document' }, { name: 'f', type: 'document', multiple: false })).not.toEqual([]);
    expect(attributeChanges({ name: 'f', type: 'document' }, { name: 'f', type: 'document', maxFileSize: 1024 })).not.toEqual([]);
  });

  it('the type-name aliases come from the registry', () => {
    expect(suggestType('string', ATTRIBUTE_TYPES)).toBe('text');
    expect(suggestType('attachment', ATTRIBUTE_TYPES)).toBe('document');
    expect(suggestType('strng', ATTRIBUTE_TYPES)).toBe('text');
  });
});

describe('the attribute input has one definition', () => {
  it('every field the registry and the common fields define is one of AddAttributeInput\'s rendered fields, and nothing else is', () => {
    const defined = new Set(['name', ...ATTRIBUTE_TYPES.flatMap((t) => fieldsOfType(t))]);
    expect(new Set(ALL_ATTRIBUTE_FIELDS)).toEqual(defined);
    expect(Object.keys(attributeFieldSchemas()).sort()).toEqual([...defined].filter((f) => f !== 'name').sort());
  });
});
