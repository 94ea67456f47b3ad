import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from '../../engine/server/json-body.js';

// The body depth limit (json-body.ts MAX_BODY_DEPTH) is checked on the raw text before
// JSON.parse. Its string skipping jumps from quote to quote; this definition walks every
// character (a backslash escapes the one after it), and the two must agree on any text at
// all, valid JSON or not, so no body nests deeper than the limit past the check.
function reference(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length; i++) {
        if (text[i] === '\\') i++;
        else if (text[i] === '"') break;
      }
    } else if (c === '[' || c === '{') {
      if (++depth > max) return true;
    } else if (c === ']' || c === '}') depth--;
  }
  return false;
}

const char = fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ',', ':', '1', 'é');
const text = fc.array(char, { maxLength: 60 }).map((cs) => cs.join(''));

describe('nestsDeeperThan', () => {
  it('agrees with the character-by-character definition on any text', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 6 }), (t, max) => {
        expect(nestsDeeperThan(t, max)).toBe(reference(t, max));
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees on JSON texts with escaped quotes and backslashes in strings', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 6 }), (v, max) => {
        const t = JSON.stringify(v);
        expect(nestsDeeperThan(t, max)).toBe(reference(t, max));
      }),
      { numRuns: 2000 },
    );
  });
});
