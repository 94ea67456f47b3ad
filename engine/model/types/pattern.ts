import { setFlagsFromString } from 'node:v8';
import { createContext, Script, type Context } from 'node:vm';

/**
 * A declared `pattern` tested against a value in bounded time. A pattern is anyone's text
 * with schema write (and a dry run's, with schema read), and a backtracking engine can take
 * exponential or high-polynomial time on some values: `^(a+)+$` against 28 a's and a "!"
 * took 23 s of the server's one thread, every other request waiting. So each test is bounded:
 *
 * - fast: the pattern compiled without the `u` flag, which V8 hands to its linear-time engine
 *   once a test backtracks too much (the flags below; V8 in Node 20 does this only for
 *   patterns without `u`). Taken when the linear engine can run the pattern (it compiles
 *   with the `l` flag: no backreference, lookaround or large bounded repeat such as `{1,10}`
 *   inside a repeat), and when it answers as the `u` pattern does: the pattern holds no
 *   astral character and no `\p`, `\P` or `\u{` (the only syntax whose meaning `u` changes
 *   in a pattern `u` accepts), and the value holds no astral character (so `.` and `[^…]`
 *   read the same units);
 * - otherwise: the `u` pattern in a vm context with a time limit; a test over it refuses the
 *   value (~0.1 ms more per test, the time limit's watchdog, for the rare pattern or value
 *   that needs it).
 */
// Process-wide, and safe so: they change no answer, only which engine finishes a test that
// backtracks too much (and let `l` ask whether the linear engine can run a pattern).
setFlagsFromString('--enable-experimental-regexp-engine');
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

/** How long one test of a value may take where the linear engine cannot stand in. */
export const PATTERN_TEST_MS = 100;

const SURROGATE = /[\uD800-\uDFFF]/;
const UNICODE_ONLY = /\\[pP]|\\u\{/;

interface Compiled {
  re: RegExp;
  /** Null when the pattern needs the bounded path for every value. */
  fast: RegExp | null;
}

/**
 * Compiled patterns, by text. Bounded in count: dry runs may send any pattern, and an entry
 * lives as long as the process (cleared whole past the bound, then compiled again on use).
 */
const compiled = new Map<string, Compiled | null>();
const MAX_COMPILED = 1000;
/** The bounded path's one context, made on its first use: each test sets the pattern and the value in it, then runs. */
let bounded: Context | undefined;
const TEST = new Script('re.test(value)');

/** Whether V8's linear-time engine can run the pattern (it refuses, at compile time, what it lacks). */
function linear(pattern: string): boolean {
  try {
    new RegExp(pattern, 'l');
    return true;
  } catch {
    return false;
  }
}

function compile(pattern: string): Compiled | null {
  let c = compiled.get(pattern);
  if (c !== undefined) return c;
  try {
    const re = new RegExp(pattern, 'u');
    c = { re, fast: SURROGATE.test(pattern) || UNICODE_ONLY.test(pattern) || !linear(pattern) ? null : new RegExp(pattern) };
  } catch {
    c = null; // refused where the declaration is checked (declaration/rules.ts)
  }
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(pattern, c);
  return c;
}

/** Whether `value` matches `pattern`; undefined when it is not a pattern, 'slow' when the test ran out of time. */
export function matchesPattern(pattern: string, value: string): boolean | 'slow' | undefined {
  const c = compile(pattern);
  if (!c) return undefined;
  if (c.fast && !SURROGATE.test(value)) return c.fast.test(value);
  bounded ??= createContext({});
  bounded['re'] = c.re;
  bounded['value'] = value;
  try {
    return TEST.runInContext(bounded, { timeout: PATTERN_TEST_MS }) === true;
  } catch {
    return 'slow';
  }
}
