import type { AttributeField, AttributeSpec, AttributeType } from '../attribute.js';

/**
 * `code` names a refusal the spec gives its own error code instead of
 * SCHEMA_VALIDATION_FAILED (a list for a single-file document → DOCUMENT_MULTIPLE_NOT_ALLOWED);
 * record writes raise it, declaration checks treat it as any other failure.
 */
export type Parsed =
  | { ok: true; value: unknown }
  /** `at`: where inside the value the problem sits (a json value's nested string), when not the whole. */
  | { ok: false; message: string; code?: 'DOCUMENT_MULTIPLE_NOT_ALLOWED'; at?: (string | number)[] };

/** A JSON Schema fragment (kept loose: it is data for ajv and for editors). */
export type JsonSchema = Record<string, unknown>;

/** Attribute fields with their JSON Schema, keyed by AttributeSpec's own fields. */
export type FieldSchemas = Readonly<Partial<Record<AttributeField, JsonSchema>>>;

/**
 * One attribute type: the only place its rules live (architecture.md "The attribute-type
 * registry"). Declaration validation, record validation and the planner read this; how a
 * value is stored is each backend's codec (engine/store/sqlite/codecs.ts). Adding a type is
 * this file plus one line in registry.ts and one codec per backend (a missing one fails to
 * compile).
 */
export interface AttributeTypeDef {
  type: AttributeType;
  /** "an integer", used in messages: `amount must be an integer`. */
  noun: string;
  /** Words people write for this type (`string` → text), suggested before edit distance (issue 2). */
  aliases?: readonly string[];
  /**
   * The JSON Schema of a value of this type, as far as one can say it without the
   * attribute's own constraints: the declaration schema checks `default` with it, so an
   * editor refuses `default: "yes"` on a boolean.
   */
  valueSchema: JsonSchema;
  /**
   * Type-specific AddAttributeInput fields with their JSON Schema: the declaration schema, the
   * route bodies and openapi.json are built from these (engine/declaration/json-schema.ts,
   * engine/server/schemas/schema-objects.ts). Keyed by AttributeSpec's fields, so a field
   * the TypeScript shape lacks does not compile.
   */
  fields: FieldSchemas;
  /** Type-specific fields that must be given (select → options, relation → target). */
  requiredFields?: readonly string[];
  /** Whether `unique: true` makes sense for this type. */
  uniqueAllowed: boolean;
  /**
   * What a value points at, for types whose values are ids (registry.ts `relationTarget`,
   * `holdsDocuments`): `record` — records of the attribute's `target` object (the target must
   * exist, follows an object rename, keeps a dropped object referenced); `document` — documents
   * attached through the files store (deleted with the attribute). Ids are not known in a
   * declaration, so such an attribute takes no default.
   */
  reference?: 'record' | 'document';
  /** Whether the column holds a JSON list: always, only with `multiple: true`, or never. */
  list: 'always' | 'multiple' | 'never';
  /** Cross-object search indexes it (contract.md §3: the text-like attributes). */
  fullText: boolean;
  /** `min` and `max` must be whole numbers (an integer's bounds). */
  wholeBounds?: boolean;
  /**
   * What the type takes an omitted field to be: a declaration that spells it out is no change
   * (a relation's `multiple: false`, a document's default maxFileSize).
   */
  implied?: Readonly<Partial<Pick<AttributeSpec, 'multiple' | 'maxFileSize'>>>;
  /**
   * Check a non-null value against the type and the attribute's constraints and return
   * it normalised (datetimes to UTC ISO, for instance). Relation existence and
   * uniqueness need the store and are checked there.
   */
  parse(value: unknown, spec: AttributeSpec): Parsed;
  /** Types every value of this type converts to without loss (select → text …). */
  widensTo: readonly AttributeType[];
  /**
   * Try to convert a stored value of another type into this one (for a type change):
   * the converted value, or undefined when it cannot be converted.
   */
  convertFrom(value: unknown): unknown;
  /** How search filters compare this type (contract.md §3); engine/model/filter-operand.ts applies it. */
  filter: FilterRule;
}

/**
 * A filter operand is parsed like a value (parse; the backend encodes it) but without the attribute's
 * write constraints: `{ amount: { lt: -5 } }` is a fine filter even with `min: 0`.
 */
export interface FilterRule {
  /** gt/gte/lt/lte mean something: the stored column sorts as the values do. */
  ordered: boolean;
  /** contains/startsWith apply and, like gt…lte, take any string (a part of a value). */
  text: boolean;
  /**
   * One operand → its column value, for types whose filters do not compare with a whole
   * value: list types match when one element equals the operand (json_each), so the
   * operand is one option or one id.
   */
  operand?: (value: string | number | boolean, spec: AttributeSpec) => Parsed;
}
