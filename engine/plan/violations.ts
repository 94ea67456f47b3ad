import type { AttributeSpec } from '../model/attribute.js';
import { convertValue } from '../model/types/convert.js';
import { keepsValue, relationTarget, typeDef } from '../model/types/registry.js';
import { afterBackfill, SAMPLE_IDS, type Violation, type ViolationRule } from './facts.js';

/**
 * What makes stored data violate a new attribute spec: the one definition of the rules
 * behind DataFacts.violations (engine/plan/facts.ts). Pure: a backend reads the column
 * (engine/store/<backend>/facts.ts) and hands the values over; tests hand over rows held in
 * memory. So the planner, PUT …/attributes/:id and the planner's own tests judge the same
 * data the same way (issue 14: a second copy in the tests counted UTF-16 units where the
 * registry counts code points).
 */

/** One record's non-null value of the attribute, as the API gives it under the attribute's current spec. */
export interface StoredValue {
  id: string;
  value: unknown;
}

/**
 * The stored column of one attribute, oldest record first (the order sample ids follow).
 * When writes interleave, the answer is only as current as the read: the store reads the
 * column inside the write transaction that applies the change (the push, PUT …/attributes/:id),
 * so what is judged here is what the change then converts or refuses.
 */
export interface StoredColumn {
  /** Ids of the records whose value is null. Read only when `next` is required. */
  emptyIds(): Iterable<string>;
  /** Every non-null value. Iterated once, so a backend may stream it. */
  values(): Iterable<StoredValue>;
}

const RELAXATIONS: readonly [ViolationRule, (keyof AttributeSpec)[]][] = [
  ['pattern', ['pattern']],
  ['length', ['minLength', 'maxLength']],
  ['range', ['min', 'max']],
];

/** `next` without the constraints RELAXATIONS name: what the value must be to stay a value at all. */
function relaxed(next: AttributeSpec): AttributeSpec {
  const spec: AttributeSpec = { ...next };
  for (const [, fields] of RELAXATIONS) for (const f of fields) delete spec[f];
  return spec;
}

function pick(spec: AttributeSpec, fields: (keyof AttributeSpec)[]): Partial<AttributeSpec> {
  const out: Partial<AttributeSpec> = {};
  for (const f of fields) if (spec[f] !== undefined) (out as Record<string, unknown>)[f] = spec[f];
  return out;
}

/**
 * Every rule a converted value breaks under `next` (empty when it is valid), so a dry run
 * lists each conflict of an attribute, not the first one found. 'type' means the value
 * becomes null (the column rebuild cannot hold it), which a required `next` refuses as well.
 */
function brokenRules(value: unknown, next: AttributeSpec): ViolationRule[] {
  if (value === null) return next.required ? ['required'] : [];
  const def = typeDef(next.type);
  if (value !== undefined && def.parse(value, next).ok) return [];
  // a list where the type holds one id unless `multiple` (relation, document: the registry's `list`)
  if (def.list === 'multiple' && !next.multiple && Array.isArray(value)) return ['multiple'];
  const loose = relaxed(next);
  let rules: ViolationRule[] = [];
  if (value !== undefined && def.parse(value, loose).ok) {
    // a value that only breaks constraints breaks those that refuse it alone
    rules = RELAXATIONS.filter(([, fields]) => !def.parse(value, { ...loose, ...pick(next, fields) }).ok).map(([rule]) => rule);
  } else if (value !== undefined && def.fields.options !== undefined) rules = ['options'];
  if (rules.length > 0) return rules;
  return next.required ? ['type', 'required'] : ['type'];
}

/**
 * The violations of `column` (stored under `current`) under `next`: one entry per rule
 * with at least one record, each with its count and up to SAMPLE_IDS ids.
 */
export function collectViolations(current: AttributeSpec, next: AttributeSpec, column: StoredColumn): Violation[] {
  const found = new Map<ViolationRule, Violation>();
  const note = (rule: ViolationRule, id: string): void => {
    const v = found.get(rule) ?? { rule, count: 0, sampleIds: [] };
    v.count++;
    if (v.sampleIds.length < SAMPLE_IDS) v.sampleIds.push(id);
    found.set(rule, v);
  };
  const seen = new Map<string, string>();
  const dupes = new Set<string>();
  const def = typeDef(next.type);
  const loose = relaxed(next);
  const unique = (key: string, id: string): void => {
    const first = seen.get(key);
    if (first === undefined) seen.set(key, id);
    else {
      if (!dupes.has(first)) {
        dupes.add(first);
        note('unique', first);
      }
      dupes.add(id);
      note('unique', id);
    }
  };
  const keys: [string, string][] = [];
  let firstEmpty: string | undefined;
  if (next.required) {
    for (const id of column.emptyIds()) {
      note('required', id);
      firstEmpty ??= id;
    }
  }
  const typeChange = current.type !== next.type;
  // One definition of the relation-target rule (issue 4): links stored under the old
  // target would point at records of the wrong object, for the planner and PUT …/attributes/:id alike.
  const retarget = !typeChange && relationTarget(current) !== relationTarget(next);
  for (const { id, value } of column.values()) {
    const converted = convertValue(value, current, next);
    const rules = brokenRules(converted, next);
    for (const rule of rules) note(rule, id);
    if (rules.includes('type')) {
      firstEmpty ??= id; // it becomes null
      continue;
    }
    if (rules.includes('multiple')) continue;
    if (retarget && rules.length === 0) note('relation_target', id);
    // a value breaking length/pattern/range/options stays a value: it still counts for lossy and unique
    const parsed = converted === null ? undefined : rules.length === 0 ? def.parse(converted, next) : def.parse(converted, loose);
    const kept = parsed?.ok ? parsed.value : converted;
    if (typeChange && converted !== null && !keepsValue(current, next, value, kept)) note('lossy', id);
    // Keyed by the normalised value, as the unique index compares what is stored under `next`.
    if (next.unique && converted !== null) keys.push([JSON.stringify(kept), id]);
  }
  // Duplicates are counted once every empty value is known (stored nulls and values that
  // cannot convert): the one empty value will hold the default, so a stored value equal to
  // it is a duplicate, counted first (it is the record the fill changes).
  const empty = found.get('required');
  if (next.unique && empty && firstEmpty !== undefined && afterBackfill(empty, next) === undefined) {
    const parsed = def.parse(next.default, next);
    if (parsed.ok) unique(JSON.stringify(parsed.value), firstEmpty);
  }
  for (const [key, id] of keys) unique(key, id);
  return [...found.values()];
}
