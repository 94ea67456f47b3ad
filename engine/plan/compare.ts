import { ALL_ATTRIBUTE_FIELDS, type AttributeSpec } from '../model/attribute.js';
import { typeDef } from '../model/types/registry.js';
import type { FieldChange } from './types.js';

/**
 * Field comparison shared by the attribute, object and view diffs. Absent and the
 * field's default are the same thing (`required` absent = false; a document without
 * maxFileSize has 25MB, contract.md §2), so a declaration planned against its own
 * result gives zero steps whichever way the store echoes defaults.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // primitives that differ by === differ (the planner runs this 50,000 times on a big schema)
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  return JSON.stringify(sortKeys(v)) ?? 'undefined';
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = sortKeys(x);
    }
    return out;
  }
  return v;
}

/** Fields that are not part of the attribute's shape (identity and sync-only hints). */
const IGNORED: ReadonlySet<string> = new Set(['name', 'renamedFrom']);

function normalField(spec: AttributeSpec, field: keyof AttributeSpec): unknown {
  const v = spec[field];
  if ((field === 'required' || field === 'unique') && v === false) return undefined;
  // the type's implied value of an omitted field (engine/model/types: a relation's multiple: false …)
  if ((field === 'multiple' || field === 'maxFileSize') && v !== undefined && typeDef(spec.type).implied?.[field] === v) return undefined;
  if ((field === 'label' || field === 'description') && v === '') return undefined;
  return v;
}

const FIELD_ORDER: ReadonlyMap<string, number> = new Map(ALL_ATTRIBUTE_FIELDS.map((f, i) => [f, i]));

/**
 * Field changes, in the order fields are rendered. Only keys present on either side can
 * differ, so it walks those (two to five per attribute) rather than every field: on a
 * 50,000-attribute schema the full walk dominated the plan.
 */
export function attributeChanges(from: AttributeSpec, to: AttributeSpec): FieldChange[] {
  let changes: FieldChange[] | undefined;
  const check = (field: string) => {
    if (IGNORED.has(field) || !FIELD_ORDER.has(field)) return;
    const f = field as keyof AttributeSpec;
    const a = normalField(from, f);
    const b = normalField(to, f);
    if (!sameValue(a, b)) (changes ??= []).push({ field, from: a, to: b });
  };
  for (const k in from) check(k);
  for (const k in to) if (!Object.hasOwn(from, k)) check(k);
  if (!changes) return [];
  return changes.sort((x, y) => (FIELD_ORDER.get(x.field) ?? 0) - (FIELD_ORDER.get(y.field) ?? 0));
}

/** Fields whose change can make stored values invalid, so the data must be probed. */
export const DATA_FIELDS: ReadonlySet<string> = new Set([
  'type',
  'required',
  'unique',
  'min',
  'max',
  'minLength',
  'maxLength',
  'pattern',
  'options',
  'multiple',
  'target', // links under the old target (the relation_target rule of the data probe)
]);

/** Pick only defined fields, so exactOptionalPropertyTypes holds for specs we build. */
export function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as T;
}
