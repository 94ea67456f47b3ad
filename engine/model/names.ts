import { ServiceError } from '../errors.js';
import type { AttributeSpec, AttributeType } from './attribute.js';
import type { RecordOut } from './stored.js';

/**
 * Name rules (contract.md §2), the one definition used by the YAML validator, the
 * schema routes, the sync engine and the store. Because every SQL identifier the store
 * writes comes from a name that passed NAME_PATTERN, identifiers never need escaping
 * beyond double quotes.
 */
export const NAME_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
export const NAME_PATTERN_SOURCE = '^[a-z][a-z0-9_]{0,62}$';

/** Framework-native objects (service-interface.md Resources). */
export const RESERVED_OBJECT_NAMES: readonly string[] = ['skill', 'memory', 'drives', 'artifact', 'meeting'];

/**
 * The system attributes (contract.md §2: "present on every object, system-protected, never
 * declarable"): the one table every layer reads — the name rules below, the declaration
 * JSON Schema, the filter grammar, the store's catalog and record tables, the CLI's record
 * files. `column`: a column of every record table, so search filters and sorts on it
 * (`object` is not: it is the table itself). `recordField`: the field of the record as
 * routes answer it (contract.md §3 `{ id, object, version, createdAt, updatedAt, values }`).
 */
export interface SystemAttribute {
  readonly name: string;
  /** The type it reads as: filters compare by it. */
  readonly type: AttributeType;
  readonly column: boolean;
  readonly recordField?: keyof RecordOut;
}

export const SYSTEM_ATTRIBUTE_TABLE: readonly SystemAttribute[] = [
  { name: 'id', type: 'text', column: true, recordField: 'id' },
  { name: 'object', type: 'text', column: false, recordField: 'object' },
  { name: 'version', type: 'integer', column: true, recordField: 'version' },
  { name: 'created_at', type: 'datetime', column: true, recordField: 'createdAt' },
  { name: 'updated_at', type: 'datetime', column: true, recordField: 'updatedAt' },
  { name: 'created_by', type: 'text', column: true },
];

/** The system attributes' names. */
export const SYSTEM_ATTRIBUTES: readonly string[] = SYSTEM_ATTRIBUTE_TABLE.map((a) => a.name);

/** Each system attribute as an AttributeSpec (the store creates these on every object). */
export const SYSTEM_SPECS: readonly AttributeSpec[] = SYSTEM_ATTRIBUTE_TABLE.map(({ name, type }) => ({ name, type }));

/** The system attributes that are columns of every record table: search filters and sorts on them. */
export const SYSTEM_COLUMNS: readonly string[] = SYSTEM_ATTRIBUTE_TABLE.filter((a) => a.column).map((a) => a.name);

/** The record's own fields that carry a system attribute (`createdAt` …), as a record file may hold them. */
export const SYSTEM_RECORD_FIELDS: readonly string[] = SYSTEM_ATTRIBUTE_TABLE.flatMap((a) => (a.recordField !== undefined ? [a.recordField] : []));

function isSystemAttribute(name: string): boolean {
  return SYSTEM_ATTRIBUTES.includes(name);
}

/** The spec a filter or sort on a system column compares by, or undefined when `name` is none. */
export function systemColumnSpec(name: string): AttributeSpec | undefined {
  return SYSTEM_COLUMNS.includes(name) ? SYSTEM_SPECS.find((a) => a.name === name) : undefined;
}

/**
 * The filter grammar's combinators (contract.md §3 search: `and`, `or`, `not` are keys of
 * a filter): an attribute so named could never be filtered on, so none may be declared.
 */
export const RESERVED_ATTRIBUTE_NAMES: readonly string[] = ['and', 'or', 'not'];

export function isValidName(name: unknown): name is string {
  return typeof name === 'string' && NAME_PATTERN.test(name);
}

const NAME_RULE = 'lowercase letters, digits and underscores, starting with a letter, at most 63 characters';

/** The one sentence for a name that breaks the name rule: objects, attributes, views and roles alike. */
export function malformedName(kind: 'Object' | 'Attribute' | 'View' | 'Role', name: unknown): string {
  return `${kind} name ${quoteName(name)} is malformed: use ${NAME_RULE}.`;
}

/**
 * A name as messages quote it. Routes do not cap name lengths (a bad name answers its
 * code, an unknown one its NOT_FOUND), so a 10,000-character name is cut, not echoed whole.
 */
export function quoteName(name: unknown): string {
  if (typeof name === 'string' && name.length > 80) return `${JSON.stringify(`${name.slice(0, 60)}…`)} (${name.length} characters)`;
  return JSON.stringify(name);
}

/** The problem with an object name, or null when it may be used for a new object. */
export function objectNameProblem(name: unknown): ServiceError | null {
  if (!isValidName(name)) {
    return new ServiceError(
      'SCHEMA_INVALID_OBJECT_NAME',
      malformedName('Object', name),
    );
  }
  if (RESERVED_OBJECT_NAMES.includes(name)) {
    return new ServiceError(
      'SCHEMA_RESERVED_OBJECT_NAME',
      `Object name "${name}" is reserved for a framework-native object (${RESERVED_OBJECT_NAMES.join(', ')}).`,
    );
  }
  return null;
}

/** The problem with an attribute name, or null when it may be declared. */
export function attributeNameProblem(name: unknown): ServiceError | null {
  if (!isValidName(name)) {
    return new ServiceError(
      'SCHEMA_INVALID_ATTRIBUTE_NAME',
      malformedName('Attribute', name),
    );
  }
  if (isSystemAttribute(name)) {
    return new ServiceError(
      'SCHEMA_INVALID_ATTRIBUTE_NAME',
      `Attribute name "${name}" is a system attribute (${SYSTEM_ATTRIBUTES.join(', ')}) and cannot be declared.`,
    );
  }
  if (RESERVED_ATTRIBUTE_NAMES.includes(name)) {
    return new ServiceError(
      'SCHEMA_INVALID_ATTRIBUTE_NAME',
      `Attribute name "${name}" is reserved: ${RESERVED_ATTRIBUTE_NAMES.join(', ')} combine conditions in a search filter, so an attribute by that name could not be filtered on. Pick another name (e.g. "${name}_value").`,
    );
  }
  return null;
}

/** Fast check for hot loops (a 1,000-object plan): true when attributeNameProblem would be null. */
export function isDeclarableAttributeName(name: unknown): name is string {
  return isValidName(name) && !isSystemAttribute(name) && !RESERVED_ATTRIBUTE_NAMES.includes(name);
}

/** Double-quoted SQL identifier; refuses anything that did not pass the name rule. */
export function sqlIdent(name: string): string {
  if (!NAME_PATTERN.test(name)) throw new Error(`refusing unvalidated SQL identifier ${JSON.stringify(name)}`);
  return `"${name}"`;
}
