import { fieldsOfType } from '../declaration/json-schema.js';
import { validateAttributeInput } from '../declaration/validate.js';
import { ServiceError } from '../errors.js';
import type { AttributePatch, AttributeSpec } from '../model/attribute.js';
import { attributeNameProblem } from '../model/names.js';
import { RUNTIME_RENAMED_FROM } from '../model/renames.js';

/**
 * AddAttributeInput checks through the declaration validator (the one definition of the
 * attribute format), turned into the spec's codes: a bad or system name keeps its own
 * code, everything else is SCHEMA_VALIDATION_FAILED with every problem listed.
 */
export function checkAttributeInput(raw: unknown, path: (string | number)[] = []): AttributeSpec {
  const name = typeof raw === 'object' && raw !== null ? (raw as { name?: unknown }).name : undefined;
  const nameProblem = attributeNameProblem(name);
  if (nameProblem) throw withPath(nameProblem, [...path, 'name']);
  refuseRenamedFrom(raw, path);
  return checked(validateAttributeInput(name as string, raw), path) as AttributeSpec;
}

export function checkAttributePatch(name: string, raw: unknown): Partial<AttributeSpec> {
  refuseRenamedFrom(raw, []);
  if (typeof raw === 'object' && raw !== null && Object.hasOwn(raw, 'name')) {
    const nameProblem = attributeNameProblem((raw as { name?: unknown }).name);
    if (nameProblem) throw withPath(nameProblem, ['name']);
  }
  return checked(validateAttributeInput(name, raw, { partial: true }), []);
}

/**
 * The attribute `current` becomes under a PUT body: the patch's fields set, its `null`s
 * removed (name and type cannot be; their null is a type error like any other), then the
 * whole checked as AddAttributeInput. A field the new type does not take, kept from
 * `current` because the body did not mention it, is refused saying how to drop it: never
 * dropped silently, the caller may have meant another type.
 */
export function mergeAttributePatch(current: AttributeSpec, raw: AttributePatch | Record<string, unknown>): AttributeSpec {
  const sent: Record<string, unknown> = {};
  const removed: string[] = [];
  for (const [k, v] of Object.entries(raw)) {
    if (v === null && k !== 'name' && k !== 'type') removed.push(k);
    else sent[k] = v;
  }
  const patch = checkAttributePatch(current.name, sent);
  const next: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(patch)) next[k] = v;
  for (const k of removed) delete next[k];
  const type = next['type'] as AttributeSpec['type'];
  const taken = new Set(fieldsOfType(type));
  const stale = Object.keys(next).filter((k) => k !== 'name' && !taken.has(k) && !Object.hasOwn(raw, k));
  if (stale.length > 0) throw staleFields(current.name, type, stale);
  return checkAttributeInput(next);
}

/**
 * `renamedFrom` tells sync to rename in place (declaration files only); these inputs are the
 * runtime routes', whose schemas leave it out too: refused, never stored or ignored.
 */
function refuseRenamedFrom(raw: unknown, path: (string | number)[]): void {
  if (typeof raw !== 'object' || raw === null || !Object.hasOwn(raw, 'renamedFrom')) return;
  throw new ServiceError('SCHEMA_VALIDATION_FAILED', RUNTIME_RENAMED_FROM, { errors: [{ path: [...path, 'renamedFrom'], message: RUNTIME_RENAMED_FROM }] });
}

function staleFields(name: string, type: string, fields: string[]): ServiceError {
  const listed = fields.map((f) => JSON.stringify(f)).join(', ');
  const nulls = fields.map((f) => `${JSON.stringify(f)}: null`).join(', ');
  const [verb, them] = fields.length === 1 ? ['does', 'it'] : ['do', 'them'];
  const message = `Attribute "${name}": ${listed} ${verb} not apply to a ${type} attribute: send ${nulls} to remove ${them}`;
  return new ServiceError('SCHEMA_VALIDATION_FAILED', message, {
    errors: fields.map((f) => ({ path: [f], message: `does not apply to a ${type} attribute: send ${JSON.stringify(f)}: null to remove it` })),
    fix: `Add ${nulls} to the body, or keep the type.`,
  });
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
