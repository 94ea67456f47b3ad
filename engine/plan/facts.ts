import type { AttributeSpec } from '../model/attribute.js';

/**
 * What the planner may ask about stored data (architecture.md pattern 4: a separate
 * read-only pass answering with counts and sample ids). The planner stays synchronous
 * and free of I/O: it calls this interface, which the store implements over SQLite
 * (better-sqlite3 is synchronous) and tests implement in memory.
 *
 * The same `violations` check is what PUT /schema/objects/:id/attributes/:id uses to
 * refuse a change that existing data breaks, so the rule is written once.
 */
export type ViolationRule =
  | 'type' // stored values the new type cannot hold (lossy conversion)
  | 'required' // nulls under a required: stored ones, and those a type change leaves (values it cannot convert)
  | 'unique' // duplicates under a new unique
  | 'options' // values not among the new select/multiselect options
  | 'length' // minLength / maxLength
  | 'range' // min / max
  | 'pattern'
  | 'multiple' // records holding several ids under a single-value rule
  | 'lossy' // values a type change converts but alters (round trip differs: time, leading zeros)
  | 'relation_target'; // links under a relation whose target object changes

export interface Violation {
  rule: ViolationRule;
  /** Records affected. */
  count: number;
  /** Up to five record ids, for the message and the fix. */
  sampleIds: string[];
}

export interface DataFacts {
  /** Records stored for the object (0 when it does not exist yet). */
  recordCount(object: string): number;
  /** Records where the attribute holds a non-null value. */
  nonNullCount(object: string, attribute: string): number;
  /**
   * Stored values of `object.attribute` (read with its current spec) that would not be
   * valid under `next`, after converting them with the registry's convertFrom when the
   * type changes. One entry per rule that has at least one violation.
   */
  violations(object: string, attribute: string, next: AttributeSpec): Violation[];
  /** Documents attached through a document attribute (what leaves when it stops being one). */
  documentCount(object: string, attribute: string): number;
  /** Up to SAMPLE_IDS record ids of the object, oldest first (records a new required attribute would lack). */
  recordSample(object: string): string[];
}

/** Sample ids shown in messages (issue: "up to five sample record ids"). */
export const SAMPLE_IDS = 5;

/**
 * Required over stored nulls when `next` has a non-null default: the change fills the empty
 * values with the default in its own transaction (the plan's backfill step, and
 * PUT …/attributes/:id alike), so the violation is covered — undefined. A unique attribute
 * with more than one empty value is not: they would all take the one default, which is
 * reported as the unique violation it becomes. Any other violation is returned as is.
 */
export function afterBackfill(v: Violation, next: AttributeSpec): Violation | undefined {
  if (v.rule !== 'required' || next.default === undefined || next.default === null) return v;
  if (next.unique && v.count > 1) return { ...v, rule: 'unique' };
  return undefined;
}
