import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, propertyList } from '../../engine/server/idempotency.js';

// The idempotency body hash reads canonicalJson (contract.md §3: the same body replays, key
// order aside). Its fast form (a sorted copy written by the native JSON.stringify) must give
// exactly the text of the plain definition below, so a key remembered by an earlier version
// still matches its body, and bodies that differ only in key order hash alike.
function reference(value: unknown): string {
  return (
    JSON.stringify(value, (_k, v: unknown) => {
      if (v && typeof v === 'object' && !Array.isArray(v)) {
        const o = v as Record<string, unknown>;
        return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
      }
      return v;
    }) ?? 'null'
  );
}

const shuffled = (value: unknown, seed: number): unknown => {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v, i) => shuffled(v, seed + i));
  const entries = Object.entries(value as Record<string, unknown>);
  const order = entries.map((e, i) => ({ e, k: Math.sin(seed * 31 + i) })).sort((a, b) => a.k - b.k);
  return Object.fromEntries(order.map(({ e: [k, v] }, i) => [k, shuffled(v, seed + i + 1)]));
};

// JSON as a body parser gives it, keys with array-index forms ("0", "10", "01", "-1") included.
const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('0', '2', '10', '01', '-1', '4294967294', '4294967295', 'a', 'B', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'toJSON'));
const { json } = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.string(),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(key, tie('json'), { maxKeys: 5 }),
  ),
}));

describe('canonicalJson', () => {
  it('writes exactly the text of the replacer definition, and one text for every key order', () => {
    fc.assert(
      fc.property(json, fc.integer({ min: 1, max: 1000 }), (value, seed) => {
        const parsed = JSON.parse(JSON.stringify(value)) as unknown;
        expect(canonicalJson(parsed)).toBe(reference(parsed));
        expect(canonicalJson(shuffled(parsed, seed))).toBe(canonicalJson(parsed));
      }),
      { numRuns: 500 },
    );
  });

  // The bulk routes' shape: many records, each with its own subset of the body's keys, in
  // any order (the writer lists every key of the body once; an object lacking one skips it).
  it('writes a bulk body of records with differing key sets as the definition does', () => {
    const record = fc.dictionary(key, json, { maxKeys: 6 });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 30 }), fc.integer({ min: 1, max: 1000 }), (records, seed) => {
        const body = JSON.parse(JSON.stringify({ records, upsert: records.length % 2 === 0 })) as unknown;
        expect(canonicalJson(body)).toBe(reference(body));
        expect(canonicalJson(shuffled(body, seed))).toBe(canonicalJson(body));
      }),
      { numRuns: 300 },
    );
  });

  it('writes values JSON.parse never makes as the definition does (undefined, functions, toJSON)', () => {
    const odd = [
      undefined,
      { a: undefined, b: 1 },
      [undefined, () => 1],
      { c: { toJSON: () => 'x' } },
      Object.assign(Object.create(null) as object, { z: 1, y: 2 }),
      { toJSON: 3, a: 1 },
    ];
    for (const v of odd) expect(canonicalJson(v)).toBe(reference(v));
  });

  it('copies a `__proto__` key as data, never as the prototype', () => {
    const body = JSON.parse('{"b":1,"__proto__":{"polluted":true},"a":[{"__proto__":2}]}') as unknown;
    expect(canonicalJson(body)).toBe(reference(body));
    expect(canonicalJson(body)).toBe('{"__proto__":{"polluted":true},"a":[{"__proto__":2}],"b":1}');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('writes own keys only when an enumerable key reaches the objects through their prototype (a polluted Object.prototype)', () => {
    const body = JSON.parse('{"b":1,"a":{"c":2}}') as unknown;
    const before = canonicalJson(body);
    Object.defineProperty(Object.prototype, 'zz', { value: 'inherited', enumerable: true, configurable: true, writable: true });
    try {
      // The property list would read `zz` through every object; the walk sees it and the copy writes the body.
      expect(propertyList(body)).toBeNull();
      expect(canonicalJson(body)).toBe(before);
      expect(canonicalJson(body)).toBe('{"a":{"c":2},"b":1}');
    } finally {
      delete (Object.prototype as { zz?: unknown }).zz;
    }
  });

  it('a body whose objects share few keys is written through the property list; a wide one through the copy, with the same text', () => {
    // A bulk body: every record has the same attributes, so each key is looked up about once per record.
    const bulk = { records: Array.from({ length: 200 }, (_, i) => ({ title: `t${i}`, amount: i, tags: ['a'], meta: { k: i } })) };
    expect(propertyList(bulk)).toEqual(['amount', 'k', 'meta', 'records', 'tags', 'title']);
    // Distinct keys in distinct objects: the list would cost objects × keys lookups (a stall
    // for the server: 20,000 such objects took ~20 s), the copy one per property.
    const wide = { a: Array.from({ length: 2000 }, (_, i) => ({ [`k${i}`]: i })) };
    expect(propertyList(wide)).toBeNull();
    expect(canonicalJson(wide)).toBe(reference(wide));
    expect(canonicalJson(shuffled(wide, 7))).toBe(canonicalJson(wide));
  });
});
