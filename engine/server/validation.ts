import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '../errors.js';
import { UUID_PATTERN } from '../model/ids.js';

/**
 * Request validation. Two Ajv instances because the parts differ (contract.md §3):
 * JSON bodies are checked as sent — no type coercion (`"3"` is not a limit), no silent
 * removal of unknown fields (a typo is an error, not ignored) and every problem reported
 * (Envelope rule 1: "errors lists each invalid field"); path params, query strings and
 * headers arrive as strings, so they are coerced.
 */

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    // Bodies are size-capped (bodyLimit) and arrays carry maxItems, so allErrors cannot
    // be turned into a CPU sink.
    allErrors: true,
    strict: false,
  });
  ajv.addFormat('uuid', UUID_PATTERN);
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => !Number.isNaN(Date.parse(s)) });
  return ajv;
}

const bodyAjv = makeAjv(false);
const partAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : partAjv;
  return ajv.compile(schema as object) as ValidateFunction;
};

/**
 * Ajv errors → envelope items. The instancePath (`/records/3/amount`) becomes a path
 * array (`["records", 3, "amount"]`); `required` and `additionalProperties` name the
 * property itself. Parts other than the body are prefixed (`["headers", "if-match"]`).
 */
export function ajvErrorsToFieldErrors(errors: Partial<ErrorObject>[], context?: string): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const path: (string | number)[] = context && context !== 'body' ? [context] : [];
    for (const seg of (e.instancePath ?? '').split('/').slice(1)) {
      const s = seg.replace(/~1/g, '/').replace(/~0/g, '~');
      path.push(/^\d+$/.test(s) ? Number(s) : s);
    }
    const params = (e.params ?? {}) as Record<string, unknown>;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required' && typeof params['missingProperty'] === 'string') {
      path.push(params['missingProperty']);
      message = 'is required';
    } else if (e.keyword === 'additionalProperties' && typeof params['additionalProperty'] === 'string') {
      path.push(params['additionalProperty']);
      message = 'is not an allowed field';
    } else if (e.keyword === 'type' && Array.isArray(params['type'])) {
      // nullable fields (PUT …/attributes/:id): "must be integer or null", not ajv's "integer,null"
      message = `must be ${params['type'].join(' or ')}`;
    } else if (e.keyword === 'enum' && Array.isArray(params['allowedValues'])) {
      message = `must be one of ${params['allowedValues'].map((v) => JSON.stringify(v)).join(', ')}`;
    }
    const key = JSON.stringify([path, message]);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, message });
  }
  return out;
}
