/**
 * AddAttributeInput (contract.md §2): the fields of one attribute. The same shape is a
 * YAML attribute (minus `name`, which is its key), the body of
 * POST /schema/objects/:id/attributes, and (all optional) the body of PUT …/attributes/:id.
 */
export const ATTRIBUTE_TYPES = [
  'text',
  'number',
  'integer',
  'boolean',
  'date',
  'datetime',
  'email',
  'url',
  'select',
  'multiselect',
  'json',
  'relation',
  'document',
] as const;

export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

export interface AttributeSpec {
  name: string;
  type: AttributeType;
  label?: string;
  description?: string;
  required?: boolean;
  unique?: boolean;
  default?: unknown;
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  /** select, multiselect */
  options?: string[];
  /** relation: the target object's name */
  target?: string;
  /** relation: a list of ids; document: more than one file (false is the single-file rule) */
  multiple?: boolean;
  /** document: accepted MIME types, `type/*` wildcards allowed */
  accepts?: string[];
  /** document: bytes (declarations may say `10MB`; loaders normalise to bytes) */
  maxFileSize?: number;
  /** sync only: the attribute's previous name, renamed in place keeping data */
  renamedFrom?: string;
}

/**
 * The body of PUT …/attributes/:id: every field optional, and `null` removes a field (a
 * constraint loosened, or a field the new type does not take). `name` and `type` cannot be
 * removed; `renamedFrom` is a declaration-file hint for sync, not a runtime change.
 */
export type AttributePatch = { name?: string; type?: AttributeType } & {
  [K in Exclude<keyof AttributeSpec, 'name' | 'type' | 'renamedFrom'>]?: AttributeSpec[K] | null;
};

/** Fields every type accepts. Type-specific ones are listed by each type in the registry. */
export const COMMON_ATTRIBUTE_FIELDS = [
  'name',
  'type',
  'label',
  'description',
  'required',
  'unique',
  'default',
  'renamedFrom',
] as const;

/** Every field of AddAttributeInput, in the order they are rendered. */
export const ALL_ATTRIBUTE_FIELDS = [
  'name',
  'type',
  'label',
  'description',
  'required',
  'unique',
  'default',
  'min',
  'max',
  'minLength',
  'maxLength',
  'pattern',
  'options',
  'target',
  'multiple',
  'accepts',
  'maxFileSize',
  'renamedFrom',
] as const satisfies readonly (keyof AttributeSpec)[];

export type AttributeField = (typeof ALL_ATTRIBUTE_FIELDS)[number];

/** Default maxFileSize of a document attribute that gives none (contract.md §2). */
export const DEFAULT_MAX_FILE_SIZE = 25 * 1024 * 1024;
