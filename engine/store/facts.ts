import type { AttributeSpec } from '../model/attribute.js';
import { sqlIdent } from '../model/names.js';
import type { StoredObject } from '../model/stored.js';
import { keepsValue, typeDef } from '../model/types/registry.js';
import type { SqlValue } from '../model/types/type-def.js';
import { afterBackfill, SAMPLE_IDS, type DataFacts, type Violation, type ViolationRule } from '../plan/facts.js';
import { specOfStored, tableIdent } from './catalog.js';
import { convertApiValue } from './convert.js';
import type { Db } from './db.js';

/**
 * engine/plan/facts.ts over SQLite: counts in SQL, violations by reading the column and
 * running the next spec's parse in JS (the one value validator), so PUT …/attributes/:id
 * and the planner refuse exactly the same data.
 */
export function sqlFacts(db: Db, objects: () => Map<string, StoredObject>): DataFacts {
  const count = (sql: string): number => (db.prepare(sql).get() as { n: number }).n;
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
      return (db.prepare('SELECT COUNT(*) AS n FROM _ss_documents WHERE object = ? AND attribute = ?').get(object, attribute) as { n: number }).n;
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

/** Which rule a converted value breaks under `next`, or undefined when it is valid. */
export function brokenRule(value: unknown, next: AttributeSpec): ViolationRule | undefined {
  if (value === undefined) return 'type';
  if (value === null) return next.required ? 'required' : undefined;
  const def = typeDef(next.type);
  if (def.parse(value, next).ok) return undefined;
  if ((next.type === 'relation' || next.type === 'document') && !next.multiple && Array.isArray(value)) return 'multiple';
  for (const [rule, fields] of RELAXATIONS) {
    const relaxed: AttributeSpec = { ...next };
    for (const f of fields) delete relaxed[f];
    if (def.parse(value, relaxed).ok) return rule;
  }
  if (next.type === 'select' || next.type === 'multiselect') return 'options';
  return 'type';
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
  if (next.required) {
    const rows = db.prepare(`SELECT id FROM ${table} WHERE ${col} IS NULL ORDER BY _rowid_`).all() as { id: string }[];
    for (const r of rows) note('required', r.id);
    const empty = found.get('required');
    if (next.unique && empty && afterBackfill(empty, next) === undefined) {
      // the one empty value will hold the default: a stored value equal to it is a duplicate
      const parsed = def.parse(next.default, next);
      if (parsed.ok) seen.set(String(def.toColumn(parsed.value, next)), rows[0]!.id);
    }
  }
  const typeChange = current.type !== next.type;
  // One definition of the relation-target rule (issue 4): links stored under the old
  // target would point at records of the wrong object, for the planner and PUT …/attributes/:id alike.
  const retarget = !typeChange && current.type === 'relation' && next.type === 'relation' && current.target !== next.target;
  const stmt = db.prepare(`SELECT id, ${col} AS v FROM ${table} WHERE ${col} IS NOT NULL ORDER BY _rowid_`);
  for (const r of stmt.iterate() as IterableIterator<{ id: string; v: SqlValue }>) {
    const converted = convertApiValue(r.v, current, next);
    const rule = brokenRule(converted, next);
    if (rule) {
      note(rule, r.id);
      continue;
    }
    if (retarget) note('relation_target', r.id);
    if (typeChange && converted !== null) {
      const parsed = def.parse(converted, next);
      const api = typeDef(current.type).fromColumn(r.v, current);
      if (!keepsValue(current, next, api, parsed.ok ? parsed.value : converted)) note('lossy', r.id);
    }
    if (next.unique && converted !== null) {
      const parsed = def.parse(converted, next);
      const key = String(parsed.ok ? def.toColumn(parsed.value, next) : r.v);
      const first = seen.get(key);
      if (first === undefined) seen.set(key, r.id);
      else {
        if (!dupes.has(first)) {
          dupes.add(first);
          note('unique', first);
        }
        dupes.add(r.id);
        note('unique', r.id);
      }
    }
  }
  return [...found.values()];
}
