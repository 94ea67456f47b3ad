import { ServiceError, type FieldError } from '../../errors.js';
import type { AttributeSpec, AttributeType } from '../../model/attribute.js';
import { SYSTEM_ATTRIBUTES } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import { parseValue } from '../../model/types/registry.js';
import type { Codec, Param } from '../port.js';

/**
 * Record bodies → column values (issue 3 "Records"): every attribute through parseValue,
 * every bad attribute reported, unknown attributes 404, system attributes not writable.
 */
export interface ParsedRow {
  /**
   * Column values by attribute position (the order of userAttributes(o)); `undefined` where
   * the write does not set the attribute. An array, not a Map: one per record of a
   * 10,000-record bulk-create, and the insert binds them in this order anyway.
   */
  columns: (Param | undefined)[];
  /**
   * attribute name → parsed API value (relation ids, document ids…), keys in attribute
   * order. A plain object (names match NAME_PATTERN, so never `__proto__`; read it with
   * Object.hasOwn) because a create answers with exactly these values: the record reuses
   * it rather than copying 10,000 maps into 10,000 objects.
   */
  values: Record<string, unknown>;
  /** Read-only: rows without errors share one empty list (nothing per clean record). */
  errors: readonly FieldError[];
}

const NO_ERRORS: readonly FieldError[] = Object.freeze([]);

/** Per cached object (the cache is rebuilt after any schema write, so this never goes stale). */
const shapes = new WeakMap<StoredObject, Map<string, AttributeSpec>>();
const SYSTEM = new Set(SYSTEM_ATTRIBUTES);

/**
 * The same attributes as a list with each type's toColumn looked up once: parseRecordBody
 * runs per record of a 10,000-record bulk-create, so the per-value registry lookup and the
 * Map entry arrays of `for (const [name, spec] of map)` were a measurable share of it.
 */
interface Column {
  name: string;
  spec: AttributeSpec;
  codec: Codec;
}
const columnLists = new WeakMap<StoredObject, { codecs: Record<AttributeType, Codec>; list: Column[] }>();

function columnsOf(o: StoredObject, codecs: Record<AttributeType, Codec>): Column[] {
  const hit = columnLists.get(o);
  if (hit && hit.codecs === codecs) return hit.list;
  const list: Column[] = [];
  for (const spec of shapeOf(o).values()) list.push({ name: spec.name, spec, codec: codecs[spec.type] });
  columnLists.set(o, { codecs, list });
  return list;
}

function shapeOf(o: StoredObject): Map<string, AttributeSpec> {
  let m = shapes.get(o);
  if (!m) {
    m = new Map(o.attributes.filter((a) => !a.system).map((a) => [a.name, a]));
    shapes.set(o, m);
  }
  return m;
}

export function userAttributes(o: StoredObject): AttributeSpec[] {
  return [...shapeOf(o).values()];
}

/** The position of an attribute in userAttributes(o) and in ParsedRow.columns (-1: none). */
export function columnIndex(o: StoredObject, name: string): number {
  return userAttributes(o).findIndex((a) => a.name === name);
}

/**
 * `body` is checked key by key with Object.hasOwn over Object.keys, so `__proto__` or
 * `constructor` are ordinary (unknown) names and never reach a prototype.
 */
export function parseRecordBody(
  codecs: Record<AttributeType, Codec>,
  o: StoredObject,
  body: unknown,
  mode: 'create' | 'update',
  path: (string | number)[],
): ParsedRow {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', 'Validation failed', {
      errors: [{ path, message: 'must be a mapping of attribute → value' }],
    });
  }
  const input = body as Record<string, unknown>;
  const attrs = shapeOf(o);
  const errors: FieldError[] = [];
  let sent = 0;
  // for…in with an own-property check: no key array per record of a bulk write.
  for (const k in input) {
    if (!Object.hasOwn(input, k)) continue;
    sent++;
    if (SYSTEM.has(k)) {
      errors.push({ path: [...path, k], message: `${k} is a system attribute and cannot be written` });
    } else if (!attrs.has(k)) {
      throw new ServiceError('SCHEMA_ATTRIBUTE_NOT_FOUND', `${itemPrefix(path)}Object "${o.name}" has no attribute "${k}"`, {
        errors: [{ path: [...path, k], message: `unknown attribute "${k}"` }],
        fix: `use one of: ${[...attrs.keys()].join(', ') || '(no attributes yet)'}`,
      });
    }
  }
  if (mode === 'update' && sent === 0) {
    errors.push({ path, message: 'must set at least one attribute' });
  }
  const list = columnsOf(o, codecs);
  const columns = new Array<Param | undefined>(list.length);
  const values: Record<string, unknown> = {};
  for (let i = 0; i < list.length; i++) {
    const { name, spec, codec } = list[i]!;
    let raw: unknown;
    if (Object.hasOwn(input, name)) raw = input[name];
    else if (mode === 'create') raw = spec.default;
    else continue;
    const parsed = parseValue(spec, raw);
    if (!parsed.ok) {
      // A refusal with its own code (DOCUMENT_MULTIPLE_NOT_ALLOWED) answers with that code.
      if (parsed.code) throw new ServiceError(parsed.code, `${itemPrefix(path)}${o.name}.${name} ${parsed.message}`, { errors: [{ path: [...path, name], message: `${name} ${parsed.message}` }] });
      errors.push({ path: parsed.at ? [...path, name, ...parsed.at] : [...path, name], message: `${name} ${parsed.message}` });
      continue;
    }
    values[name] = parsed.value;
    columns[i] = parsed.value === null ? null : codec.encode(parsed.value, spec);
  }
  return { columns, values, errors: errors.length > 0 ? errors : NO_ERRORS };
}

/**
 * "records[1]: " for a bulk item's path (`["records", 1]`, `["records", 1, "values"]`), ""
 * for a single record's. A thrown refusal with its own code (a 404 unknown attribute) has
 * no `errors` on the wire (service-interface.md Envelope), so its message names the item,
 * as SCHEMA_RECORD_NOT_FOUND's does in bulk (issue 3: bulk errors name the item index).
 */
function itemPrefix(path: readonly (string | number)[]): string {
  return typeof path[0] === 'string' && typeof path[1] === 'number' ? `${path[0]}[${path[1]}]: ` : '';
}

export function validationFailed(errors: FieldError[]): ServiceError {
  const first = errors[0];
  const message = errors.length === 1 && first ? first.message : `${errors.length} values are invalid`;
  return new ServiceError('SCHEMA_VALIDATION_FAILED', message, { errors });
}
