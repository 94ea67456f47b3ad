import type { AttributeSpec, AttributeType } from '../attribute.js';

/** The STRICT-table column types the store may use. */
export type ColumnType = 'TEXT' | 'INTEGER' | 'REAL' | 'ANY';
export type SqlValue = string | number | bigint | null;

/**
 * `code` names a refusal the spec gives its own error code instead of
 * SCHEMA_VALIDATION_FAILED (a list for a single-file document → DOCUMENT_MULTIPLE_NOT_ALLOWED);
 * record writes raise it, declaration checks treat it as any other failure.
 */
export type Parsed = { ok: true; value: unknown } | { ok: false; message: string; code?: 'DOCUMENT_MULTIPLE_NOT_ALLOWED' };

/** A JSON Schema fragment (kept loose: it is data for ajv and for editors). */
export type JsonSchema = Record<string, unknown>;

/**
 * One attribute type: the only place its rules live (architecture.md "The attribute-type
 * registry"). Declaration validation, record validation, the planner and the DDL all read
 * this; adding a type is one file plus one line in registry.ts.
 */
export interface AttributeTypeDef {
  type: AttributeType;
  /** "an integer", used in messages: `amount must be an integer`. */
  noun: string;
  /** Type-specific AddAttributeInput fields with their JSON Schema. */
  fields: Readonly<Record<string, JsonSchema>>;
  /** Type-specific fields that must be given (select → options, relation → target). */
  requiredFields?: readonly string[];
  /** Whether `unique: true` makes sense for this type. */
  uniqueAllowed: boolean;
  column: ColumnType;
  /**
   * Check a non-null value against the type and the attribute's constraints and return
   * it normalised (datetimes to UTC ISO, for instance). Relation existence and
   * uniqueness need the store and are checked there.
   */
  parse(value: unknown, spec: AttributeSpec): Parsed;
  /** Value → column value (parse()d values only). */
  toColumn(value: unknown, spec: AttributeSpec): SqlValue;
  /** Column value → API value. */
  fromColumn(value: SqlValue, spec: AttributeSpec): unknown;
  /** Types every value of this type converts to without loss (select → text …). */
  widensTo: readonly AttributeType[];
  /**
   * Try to convert a stored value of another type into this one (for a type change):
   * the converted value, or undefined when it cannot be converted.
   */
  convertFrom(value: unknown): unknown;
}
