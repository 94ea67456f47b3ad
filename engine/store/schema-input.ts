import { validateAttributeInput } from '../declaration/validate.js';
import { ServiceError } from '../errors.js';
import type { AttributeSpec } from '../model/attribute.js';
import { attributeNameProblem } from '../model/names.js';

/**
 * AddAttributeInput checks through the declaration validator (the one definition of the
 * attribute format), turned into the spec's codes: a bad or system name keeps its own
 * code, everything else is SCHEMA_VALIDATION_FAILED with every problem listed.
 */
export function checkAttributeInput(raw: unknown, path: (string | number)[] = []): AttributeSpec {
  const name = typeof raw === 'object' && raw !== null ? (raw as { name?: unknown }).name : undefined;
  const nameProblem = attributeNameProblem(name);
  if (nameProblem) throw withPath(nameProblem, [...path, 'name']);
  return checked(validateAttributeInput(name as string, raw), path) as AttributeSpec;
}

export function checkAttributePatch(name: string, raw: unknown): Partial<AttributeSpec> {
  if (typeof raw === 'object' && raw !== null && Object.hasOwn(raw, 'name')) {
    const nameProblem = attributeNameProblem((raw as { name?: unknown }).name);
    if (nameProblem) throw withPath(nameProblem, ['name']);
  }
  return checked(validateAttributeInput(name, raw, { partial: true }), []);
}

function checked<T>(result: { value?: T; diagnostics: { severity: string; code?: string; message: string; path: (string | number)[]; fix?: string }[] }, path: (string | number)[]): T {
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  if (result.value !== undefined && errors.length === 0) return result.value;
  const nameError = errors.find((d) => d.code === 'SCHEMA_INVALID_ATTRIBUTE_NAME');
  const fix = errors.find((d) => d.fix)?.fix;
  throw new ServiceError(nameError ? 'SCHEMA_INVALID_ATTRIBUTE_NAME' : 'SCHEMA_VALIDATION_FAILED', (nameError ?? errors[0])?.message ?? 'Validation failed', {
    errors: errors.map((d) => ({ path: [...path, ...d.path], message: d.message })),
    ...(fix ? { fix } : {}),
  });
}

function withPath(e: ServiceError, path: (string | number)[]): ServiceError {
  return new ServiceError(e.code, e.message, { errors: [{ path, message: e.message }] });
}
