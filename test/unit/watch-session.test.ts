import { describe, expect, it } from 'vitest';
import type { Step } from '../../engine/plan/types.js';
import { formatDiagnostic, parseAllowDestructive, parseDebounce, summarizeSteps } from '../../cli/watch-session.js';

describe('watch session helpers', () => {
  it('reads --allow-destructive as all, a list of targets, or nothing', () => {
    expect(parseAllowDestructive(undefined)).toBe(false);
    expect(parseAllowDestructive(true)).toBe(true);
    expect(parseAllowDestructive('deal.amount, legacy')).toEqual(['deal.amount', 'legacy']);
  });

  it('refuses an empty --allow-destructive list, as sync does (an unset variable must not approve every loss)', () => {
    expect(() => parseAllowDestructive('')).toThrow(/empty list of targets/);
    expect(() => parseAllowDestructive(' , ')).toThrow(/empty list of targets/);
  });

  it('refuses a debounce that is not a number of milliseconds', () => {
    expect(parseDebounce('75')).toBe(75);
    expect(() => parseDebounce('soon')).toThrow(/--debounce must be a number/);
    expect(() => parseDebounce('-1')).toThrow(/--debounce/);
  });

  it('summarises a plan as counts per kind, in one line', () => {
    const steps = [
      { action: 'add_attribute', target: 'deal.a' },
      { action: 'add_attribute', target: 'deal.b' },
      { action: 'change_attribute', target: 'deal.c' },
      { action: 'drop_view', target: 'view:v' },
      { action: 'create_object', target: 'x' },
    ] as Step[];
    expect(summarizeSteps(steps)).toBe('+2 attributes +1 object ~1 change -1 view');
  });

  it('locates a diagnostic relative to the working directory, with the near miss', () => {
    const line = formatDiagnostic('/p', {
      severity: 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: 'Unknown type "strng"',
      file: '/p/schema/deal.yaml',
      line: 7,
      column: 15,
      suggestion: 'text',
    });
    expect(line).toBe('schema/deal.yaml:7:15 error SCHEMA_VALIDATION_FAILED Unknown type "strng" (did you mean "text"?)');
  });
});
