import { describe, expect, it } from 'vitest';
import { matchesPattern } from '../../engine/model/types/pattern.js';

// A declared pattern is tested in bounded time (engine/model/types/pattern.ts): a pattern
// that backtracks without end answers (refusing the value) instead of holding the server's
// thread; every other test answers exactly as the pattern with the `u` flag does.

describe('matchesPattern', () => {
  it('answers patterns that backtrack exponentially or polynomially, each way it may be run', () => {
    // The linear engine takes over (no `u`, a value without astral characters).
    expect(matchesPattern('^(a+)+$', `${'a'.repeat(32)}!`)).toBe(false);
    expect(matchesPattern('^(\\w+\\s?)+$', `${'word '.repeat(8)}${'x'.repeat(24)}!`)).toBe(false);
    expect(matchesPattern('^(a|aa)+$', `${'a'.repeat(48)}!`)).toBe(false);
    expect(matchesPattern('^\\w*\\w*\\w*\\w*!$', 'a'.repeat(5000))).toBe(false);
    // What the linear engine cannot run, and values it cannot read as `u` does: the time limit.
    expect(matchesPattern('^([a-z]{1,10})+$', `${'a'.repeat(48)}!`)).toBe('slow');
    expect(matchesPattern('^(a+)+$', `${'a'.repeat(32)}😀`)).toBe('slow');
    expect(matchesPattern('^(a+)+\\1$', `${'a'.repeat(32)}!`)).toBe('slow');
  });

  it('answers as the u pattern does, on either path', () => {
    const cases: [string, string][] = [
      ['^[a-z]+@[a-z]+\\.com$', 'bob@example.com'],
      ['^[a-z]+@[a-z]+\\.com$', 'bob@example.org'],
      ['^.{3}$', 'a😀b'],
      ['^.{3}$', 'abc'],
      ['^[^x]$', '😀'],
      ['^\\p{L}+$', 'héllo'],
      ['^\\p{Lu}', 'élan'],
      ['^\\u{1F600}$', '😀'],
      ['^😀+$', '😀😀'],
      ['^(?<year>\\d{4})-(?<month>\\d{2})$', '2024-05'],
      ['^(?=.*\\d)[a-z\\d]{3,}$', 'ab1'],
      ['^(?=.*\\d)[a-z\\d]{3,}$', 'abc'],
      ['^(\\w)\\1$', 'aa'],
      ['^[A-Z]{2}-\\d{4}$', 'AB-1234'],
      ['^[A-Z]{2}-\\d{4}$', 'ab-1234'],
      ['\\bé', 'café'],
      ['^\\s*$', '\u00a0\u2003'],
    ];
    for (const [pattern, value] of cases) expect(matchesPattern(pattern, value), `${pattern} ${value}`).toBe(new RegExp(pattern, 'u').test(value));
  });

  it('keeps answering across more distinct patterns than it keeps compiled (dry runs may send any)', () => {
    for (let i = 0; i < 2500; i++) expect(matchesPattern(`^a{${i % 50}}b${i}$`, `${'a'.repeat(i % 50)}b${i}`)).toBe(true);
    expect(matchesPattern('^(a+)+$', `${'a'.repeat(32)}😀`)).toBe('slow');
  });

  it('is undefined for text that is no pattern (the declaration check refuses it)', () => {
    expect(matchesPattern('([a-z]', 'a')).toBeUndefined();
    expect(matchesPattern('\\-', '-')).toBeUndefined();
  });
});
