import type { FieldError } from '../errors.js';
import { RequestValidationError } from './envelope.js';

/**
 * The JSON body parser. Fastify's own parser drops the reason a body was refused; ours
 * answers 400 Validation failed (Envelope rule 1) saying what was wrong and where.
 * `__proto__` keys and `constructor.prototype` pairs anywhere in a body are refused, so
 * client data can never reach an object's prototype (issue 3: "JSON keys like
 * `__proto__` can do no harm") and nothing sent is silently dropped. An empty body is
 * "no body" (some clients send a content type on DELETE); route schemas decide if one is needed.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RequestValidationError([{ path: [], message: `body is not valid JSON: ${(err as Error).message}` }]);
  }
  // The walk over the parsed value is only needed when the text could hold such a key:
  // spelled out, or written with a \u escape ("\u005f_proto__" parses to "__proto__").
  // A reviver would see every key, but costs on every body, the 10,000-record bulk-create too.
  if (text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')) {
    const bad = forbiddenKeys(value);
    if (bad.length) throw new RequestValidationError(bad);
  }
  return value;
}

/** Iterative (a deeply nested body must not overflow the stack). */
function forbiddenKeys(root: unknown): FieldError[] {
  const found: FieldError[] = [];
  const stack: [unknown, (string | number)[]][] = [[root, []]];
  while (stack.length && found.length < 20) {
    const [node, path] = stack.pop()!;
    if (Array.isArray(node)) {
      node.forEach((v, i) => stack.push([v, [...path, i]]));
    } else if (node && typeof node === 'object') {
      for (const key of Object.keys(node)) {
        const v = (node as Record<string, unknown>)[key];
        if (key === '__proto__') found.push({ path: [...path, key], message: 'the key "__proto__" is not allowed' });
        else if (key === 'constructor' && v && typeof v === 'object' && Object.hasOwn(v, 'prototype')) {
          found.push({ path: [...path, key, 'prototype'], message: 'the key "constructor.prototype" is not allowed' });
        } else stack.push([v, [...path, key]]);
      }
    }
  }
  return found;
}
