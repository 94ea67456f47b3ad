import { describe, expect, it } from 'vitest';
import { sameJson } from '../../engine/model/same-json.js';

// sameJson answers yes only when JSON.stringify would give one text (the route and the
// no-op push rely on it to skip work): order, nesting and types all count.
describe('sameJson', () => {
  it('says yes for equal JSON values, built separately', () => {
    const make = () => ({ objects: { a: { attributes: { x: { type: 'text', options: ['p', 'q'], min: 0 } } } }, views: {} });
    expect(sameJson(make(), make())).toBe(true);
    expect(sameJson(JSON.parse(JSON.stringify(make())), make())).toBe(true);
  });

  it('says no on any difference JSON.stringify would show', () => {
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false); // key order
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameJson({ a: [1] }, { a: { 0: 1 } })).toBe(false);
    expect(sameJson({ a: '1' }, { a: 1 })).toBe(false);
    expect(sameJson({ a: { b: { c: true } } }, { a: { b: { c: false } } })).toBe(false);
    expect(sameJson({ a: null }, { a: {} })).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: 1 })).toBe(false);
  });

  it('says no where it cannot vouch, leaving the caller to stringify', () => {
    expect(sameJson({ a: NaN }, { a: NaN })).toBe(false);
    expect(sameJson({ a: undefined }, {})).toBe(false);
    expect(sameJson({ d: new Date(0) }, { d: new Date(1) })).toBe(false);
  });
});
