import { ServiceError } from '../errors.js';

/**
 * The rules every string and every key the service stores or compares must pass (issue 21),
 * one definition for the type registry (record values, defaults, filter operands), the
 * declaration validator (names, labels, options, views), files and documents, keys, the
 * JSON body parser, and the SDK before it sends.
 *
 * 1. Well-formed Unicode. A UTF-16 surrogate without its partner (`"a\ud800"`, which JSON
 *    can carry as an escape) has no UTF-8 form: SQLite would store U+FFFD in its place, so
 *    what a write acknowledged would not be what a read returns, and `unique`, `maxLength`,
 *    `eq` and select options would judge one string while the table holds another. Such a
 *    string is refused, never replaced.
 * 2. No key that can reach a prototype: `__proto__` anywhere, or `constructor` holding a
 *    `prototype`. JSON.parse makes them own properties, but any later copy by assignment
 *    (`target[key] = value`) would set a prototype instead of a field.
 */

declare global {
  interface String {
    /** ES2024; in Node since 20.0. */
    isWellFormed(): boolean;
    /** ES2024, Node 20: unpaired surrogates replaced by U+FFFD. */
    toWellFormed(): string;
  }
}

export type Path = (string | number)[];

export const ILL_FORMED_TEXT = 'must be well-formed Unicode: it holds an unpaired UTF-16 surrogate (\\uD800-\\uDFFF without its partner), which has no UTF-8 form and cannot be stored as sent';

export function isWellFormed(s: string): boolean {
  return s.isWellFormed();
}

/** Rule 2 for one key. */
export function isForbiddenKey(key: string, value: unknown): boolean {
  if (key === '__proto__') return true;
  return key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype');
}

/** `label.b[2]`: where a problem sits, in a message. */
export function pathText(path: readonly (string | number)[], label = 'value'): string {
  let out = label;
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out === '' ? seg : `.${seg}`;
  return out;
}

export interface ValueProblem {
  /** Below the value checked; for a key, ends with that key. */
  path: Path;
  onKey: boolean;
  /** The rule broken, as a predicate: "must be well-formed Unicode: …". */
  rule: string;
}

const FORBIDDEN_KEY_RULE = 'is not allowed: a key by that name could reach an object\'s prototype';

/** The whole sentence: `data.a[0] must be …`, `the key "__proto__" in data.a is not allowed: …`. */
export function describeProblem(p: ValueProblem, label = 'value'): string {
  if (!p.onKey) return `${pathText(p.path, label)} ${p.rule}`;
  const key = JSON.stringify(p.path[p.path.length - 1]!);
  const parent = pathText(p.path.slice(0, -1), label);
  return parent === '' ? `the key ${key} ${p.rule}` : `the key ${key} in ${parent} ${p.rule}`;
}

/** The rule and, below the root, where: what a value check appends to an attribute's name. */
export function problemInValue(p: ValueProblem): string {
  if (p.path.length === 0) return p.rule;
  return `${p.rule} (${p.onKey ? `the key ${JSON.stringify(p.path[p.path.length - 1])} in ${pathText(p.path.slice(0, -1), 'the value')}` : `at ${pathText(p.path, 'the value')}`})`;
}

/**
 * Every string and key under `root` that breaks a rule above, up to `max`, each with its
 * path below the root. Iterative (a deeply nested value must not overflow the stack), one
 * shared path copied only for a problem: it runs over whole declarations and bodies.
 */
export function storedValueProblems(root: unknown, max = 20): ValueProblem[] {
  const found: ValueProblem[] = [];
  const path: Path = [];
  // A frame is a node to visit under its key, or LEAVE: the end of a container's children.
  const stack: ({ node: unknown; key: string | number | undefined } | typeof LEAVE)[] = [{ node: root, key: undefined }];
  while (stack.length > 0 && found.length < max) {
    const frame = stack.pop()!;
    if (frame === LEAVE) {
      path.pop();
      continue;
    }
    const { node, key } = frame;
    if (key !== undefined) path.push(key);
    if (typeof node === 'string') {
      if (!node.isWellFormed()) found.push({ path: [...path], onKey: false, rule: ILL_FORMED_TEXT });
    } else if (typeof node === 'object' && node !== null) {
      if (key !== undefined) stack.push(LEAVE);
      if (Array.isArray(node)) {
        for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], key: i });
      } else {
        const keys = Object.keys(node);
        for (let i = keys.length - 1; i >= 0; i--) {
          const k = keys[i]!;
          const value = (node as Record<string, unknown>)[k];
          if (!k.isWellFormed()) found.push({ path: [...path, k], onKey: true, rule: ILL_FORMED_TEXT });
          else if (isForbiddenKey(k, value)) found.push({ path: k === 'constructor' ? [...path, k, 'prototype'] : [...path, k], onKey: true, rule: FORBIDDEN_KEY_RULE });
          else stack.push({ node: value, key: k });
        }
      }
      continue;
    }
    if (key !== undefined) path.pop();
  }
  return found;
}

const LEAVE = Symbol('leave');

/**
 * The first problem only: the hot path of a value check (one per record value of a
 * 10,000-record bulk write). A clean value, the usual case, is walked without building
 * frames or paths; only a value with a problem is walked again to say where.
 */
export function firstStoredValueProblem(value: unknown): ValueProblem | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? undefined : { path: [], onKey: false, rule: ILL_FORMED_TEXT };
  if (typeof value !== 'object' || value === null) return undefined;
  return isClean(value) ? undefined : storedValueProblems(value, 1)[0];
}

function isClean(root: object): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (!node.isWellFormed()) return false;
    } else if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) stack.push(node[i]);
    } else if (typeof node === 'object' && node !== null) {
      for (const k of Object.keys(node)) {
        const v = (node as Record<string, unknown>)[k];
        if (!k.isWellFormed() || isForbiddenKey(k, v)) return false;
        stack.push(v);
      }
    }
  }
  return true;
}

/**
 * For inputs with no validator of their own (a key's name, an object's label, a header):
 * 400 SCHEMA_VALIDATION_FAILED naming each field that breaks a rule above, at its path.
 */
export function requireStoredValues(fields: Record<string, unknown>, base: Path = []): void {
  const errors: { path: Path; message: string }[] = [];
  for (const [field, value] of Object.entries(fields)) {
    for (const p of storedValueProblems(value)) errors.push({ path: [...base, field, ...p.path], message: describeProblem(p, field) });
  }
  if (errors.length > 0) {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', errors.length === 1 ? errors[0]!.message : `${errors.length} values are invalid`, { errors });
  }
}
