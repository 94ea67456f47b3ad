import { intColumn } from './rows.js';
import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import { CODECS, type SqlValue } from './codecs.js';
import { SAMPLE_IDS, type DataFacts, type Violation } from '../../plan/facts.js';
import { collectViolations } from '../../plan/violations.js';
import { specOfStored, tableIdent } from './catalog.js';
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

/** The stored column read for the one definition of the violation rules (engine/plan/violations.ts). */
export function violations(db: Db, object: string, current: AttributeSpec, next: AttributeSpec): Violation[] {
  const table = tableIdent(object);
  const col = sqlIdent(current.name);
  return collectViolations(current, next, {
    emptyIds: () => db.prepare(`SELECT id FROM ${table} WHERE ${col} IS NULL ORDER BY _rowid_`).pluck().iterate() as IterableIterator<string>,
    *values() {
      const rows = db.prepare(`SELECT id, ${col} AS v FROM ${table} WHERE ${col} IS NOT NULL ORDER BY _rowid_`).iterate() as IterableIterator<{ id: string; v: SqlValue }>;
      for (const r of rows) yield { id: r.id, value: CODECS[current.type].decode(r.v, current) };
    },
  });
}
