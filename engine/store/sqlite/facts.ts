import { intColumn } from './rows.js';
import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import { keepsValue, typeDef } from '../../model/types/registry.js';
import { CODECS, type SqlValue } from './codecs.js';
import { afterBackfill, SAMPLE_IDS, type DataFacts, type Violation, type ViolationRule } from '../../plan/facts.js';
import { specOfStored, tableIdent } from './catalog.js';
import { convertApiValue } from './convert.js';
import type { Db } from './database.js';

/**
 * engine/plan/facts.ts over SQLite: counts in SQL, violations by reading the column and
 * running the next spec's parse in JS (the one value validator), so PUT …/attributes/:id
 * and the planner refuse exactly the same data.
 */
export function sqlFacts(db: Db, objects: () => Map<string, StoredObject>): DataFacts {
  const count = (sql: string): number => intColumn(db.prepare(sql).get(), 'n');
  return {
    recordCount(object) {
      if (!objects().has(object)) return 0;
      return count(`SELECT COUNT(*) AS n FROM ${tableIdent(object)}`);
    },
    nonNullCount(object, attribute) {
      const o = objects().get(object);
      if (!o || !o.attributes.some((a) => a.name === attribute && !a.system)) return 0;
      return count(`SELECT COUNT(*) AS n FROM ${tableIdent(object)} WHERE ${sqlIdent(attribute)} IS NOT NULL`);
    },
    violations(object, attribute, next) {
      const o = objects().get(object);
      const stored = o?.attributes.find((a) => a.name === attribute && !a.system);
      if (!o || !stored) return [];
      return violations(db, object, specOfStored(stored), next);
    },
    documentCount(object, attribute) {
      const o = objects().get(object);
      if (!o || !o.attributes.some((a) => a.name === attribute && a.type === 'document')) return 0;
      // the documents table exists only on stores opened with files (engine/store/files.ts)
      const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_ss_documents'").get() !== undefined;
      if (!hasTable) return 0;
      return intColumn(db.prepare('SELECT COUNT(*) AS n FROM _ss_documents WHERE object = ? AND attribute = ?').get(object, attribute), 'n');
    },
    recordSample(object) {
      if (!objects().has(object)) return [];
      return (db.prepare(`SELECT id FROM ${tableIdent(object)} ORDER BY _rowid_ LIMIT ${SAMPLE_IDS}`).all() as { id: string }[]).map((r) => r.id);
    },
  };
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

/**
 * Every rule a converted value breaks under `next` (empty when it is valid), so a dry run
 * lists each conflict of an attribute, not the first one found. 'type' means the value
 * becomes null (the column rebuild cannot hold it), which a required `next` refuses as well.
 */
export function brokenRules(value: unknown, next: AttributeSpec): ViolationRule[] {
  if (value === null) return next.required ? ['required'] : [];
  const def = typeDef(next.type);
  if (value !== undefined && def.parse(value, next).ok) return [];
  if ((next.type === 'relation' || next.type === 'document') && !next.multiple && Array.isArray(value)) return ['multiple'];
  const loose = relaxed(next);
  let rules: ViolationRule[] = [];
  if (value !== undefined && def.parse(value, loose).ok) {
    // a value that only breaks constraints breaks those that refuse it alone
    rules = RELAXATIONS.filter(([, fields]) => !def.parse(value, { ...loose, ...pick(next, fields) }).ok).map(([rule]) => rule);
  } else if (value !== undefined && (next.type === 'select' || next.type === 'multiselect')) rules = ['options'];
  if (rules.length > 0) return rules;
  return next.required ? ['type', 'required'] : ['type'];
}

function pick(spec: AttributeSpec, fields: (keyof AttributeSpec)[]): Partial<AttributeSpec> {
  const out: Partial<AttributeSpec> = {};
  for (const f of fields) if (spec[f] !== undefined) (out as Record<string, unknown>)[f] = spec[f];
  return out;
}

export function violations(db: Db, object: string, current: AttributeSpec, next: AttributeSpec): Violation[] {
  const found = new Map<ViolationRule, Violation>();
  const note = (rule: ViolationRule, id: string): void => {
    const v = found.get(rule) ?? { rule, count: 0, sampleIds: [] };
    v.count++;
    if (v.sampleIds.length < SAMPLE_IDS) v.sampleIds.push(id);
    found.set(rule, v);
  };
  const table = tableIdent(object);
  const col = sqlIdent(current.name);
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
    const rows = db.prepare(`SELECT id FROM ${table} WHERE ${col} IS NULL ORDER BY _rowid_`).all() as { id: string }[];
    for (const r of rows) note('required', r.id);
    firstEmpty = rows[0]?.id;
  }
  const typeChange = current.type !== next.type;
  // One definition of the relation-target rule (issue 4): links stored under the old
  // target would point at records of the wrong object, for the planner and PUT …/attributes/:id alike.
  const retarget = !typeChange && current.type === 'relation' && next.type === 'relation' && current.target !== next.target;
  const stmt = db.prepare(`SELECT id, ${col} AS v FROM ${table} WHERE ${col} IS NOT NULL ORDER BY _rowid_`);
  for (const r of stmt.iterate() as IterableIterator<{ id: string; v: SqlValue }>) {
    const converted = convertApiValue(r.v, current, next);
    const rules = brokenRules(converted, next);
    for (const rule of rules) note(rule, r.id);
    if (rules.includes('type')) {
      firstEmpty ??= r.id; // it becomes null
      continue;
    }
    if (rules.includes('multiple')) continue;
    if (retarget && rules.length === 0) note('relation_target', r.id);
    // a value breaking length/pattern/range/options stays a value: it still counts for lossy and unique
    const parsed = converted === null ? undefined : rules.length === 0 ? def.parse(converted, next) : def.parse(converted, loose);
    if (typeChange && converted !== null) {
      const api = CODECS[current.type].decode(r.v, current);
      if (!keepsValue(current, next, api, parsed?.ok ? parsed.value : converted)) note('lossy', r.id);
    }
    if (next.unique && converted !== null) keys.push([String(parsed?.ok ? CODECS[next.type].encode(parsed.value, next) : r.v), r.id]);
  }
  // Duplicates are counted once every empty value is known (stored nulls and values that
  // cannot convert): the one empty value will hold the default, so a stored value equal to
  // it is a duplicate, counted first (it is the record the fill changes).
  const empty = found.get('required');
  if (next.unique && empty && firstEmpty !== undefined && afterBackfill(empty, next) === undefined) {
    const parsed = def.parse(next.default, next);
    if (parsed.ok) unique(String(CODECS[next.type].encode(parsed.value, next)), firstEmpty);
  }
  for (const [key, id] of keys) unique(key, id);
  return [...found.values()];
}
