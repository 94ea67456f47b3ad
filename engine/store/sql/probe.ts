import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import { SAMPLE_IDS, type DataFacts, type Violation } from '../../plan/facts.js';
import { collectViolations } from '../../plan/violations.js';
import type { Executor } from '../port.js';
import { specOfStored } from './catalog-rows.js';
import type { Core } from './context.js';
import { tableIdent } from './idents.js';
import { intColumn } from './rows.js';
import { countSlotDocuments } from './documents.js';
import { holdsDocuments } from '../../model/types/registry.js';

/**
 * engine/plan/facts.ts over the store (architecture.md patterns 1 and 4): the planner stays
 * pure and synchronous, so it cannot await a query. `probeFor` runs it against facts that
 * answer from what an async read pass already found; a question not answered yet is noted
 * (and answered with "nothing stored" meanwhile), read, and the planner runs again with the
 * answers, until it asks nothing new. Every run sees the same transaction, so the last plan
 * is the plan of the stored data; a planner run is pure, so the earlier runs leave nothing.
 * Counts are SQL; violations read the column and judge it by engine/plan/violations.ts (the
 * one definition), so PUT …/attributes/:id and the planner refuse exactly the same data.
 */
export async function probeFor<T>(core: Core, ex: Executor, plan: (facts: DataFacts) => T): Promise<T> {
  const answers = new Map<string, unknown>();
  for (;;) {
    const asked = new Map<string, Question>();
    const ask = <R>(q: Question, none: R): R => {
      const key = JSON.stringify(q);
      if (answers.has(key)) return answers.get(key) as R;
      asked.set(key, q);
      return none;
    };
    const facts: DataFacts = {
      recordCount: (object) => ask({ kind: 'recordCount', object }, 0),
      nonNullCount: (object, attribute) => ask({ kind: 'nonNullCount', object, attribute }, 0),
      violations: (object, attribute, next) => ask({ kind: 'violations', object, attribute, next }, []),
      documentCount: (object, attribute) => ask({ kind: 'documentCount', object, attribute }, 0),
      recordSample: (object) => ask({ kind: 'recordSample', object }, []),
    };
    const out = plan(facts);
    if (asked.size === 0) return out;
    for (const [key, q] of asked) answers.set(key, await answer(core, ex, q));
  }
}

type Question =
  | { kind: 'recordCount'; object: string }
  | { kind: 'nonNullCount'; object: string; attribute: string }
  | { kind: 'violations'; object: string; attribute: string; next: AttributeSpec }
  | { kind: 'documentCount'; object: string; attribute: string }
  | { kind: 'recordSample'; object: string };

/** One question, read now (inside the caller's transaction: the data the plan will meet). */
export async function answer(core: Core, ex: Executor, q: Question): Promise<unknown> {
  const o = (await core.catalog.objects(ex)).get(q.object);
  const count = async (sql: string, params: string[] = []): Promise<number> => intColumn(await ex.get(sql, params), 'n');
  switch (q.kind) {
    case 'recordCount':
      return o ? count(`SELECT COUNT(*) AS n FROM ${tableIdent(q.object)}`) : 0;
    case 'nonNullCount':
      if (!o || !o.attributes.some((a) => a.name === q.attribute && !a.system)) return 0;
      return count(`SELECT COUNT(*) AS n FROM ${tableIdent(q.object)} WHERE ${sqlIdent(q.attribute)} IS NOT NULL`);
    case 'violations': {
      const stored = o?.attributes.find((a) => a.name === q.attribute && !a.system);
      return o && stored ? violations(core, ex, q.object, specOfStored(stored), q.next) : [];
    }
    case 'documentCount':
      if (!o || !o.attributes.some((a) => a.name === q.attribute && holdsDocuments(a))) return 0;
      return countSlotDocuments(ex, q.object, q.attribute);
    case 'recordSample':
      if (!o) return [];
      return (await ex.all<{ id: string }>(`SELECT id FROM ${tableIdent(q.object)} ORDER BY ${core.dialect.insertionOrder} LIMIT ${SAMPLE_IDS}`)).map((r) => r.id);
  }
}

/**
 * The stored column read for the one definition of the violation rules
 * (engine/plan/violations.ts), inside the caller's transaction: PUT …/attributes/:id and the
 * planner (through `answer`) judge the data the change will meet.
 */
export async function violations(core: Core, ex: Executor, object: string, current: AttributeSpec, next: AttributeSpec): Promise<Violation[]> {
  const table = tableIdent(object);
  const col = sqlIdent(current.name);
  const order = core.dialect.insertionOrder;
  const decode = core.codecs[current.type];
  const emptyIds = next.required ? (await ex.all<{ id: string }>(`SELECT id FROM ${table} WHERE ${col} IS NULL ORDER BY ${order}`)).map((r) => r.id) : [];
  const rows = await ex.all<{ id: string; v: unknown }>(`SELECT id, ${col} AS v FROM ${table} WHERE ${col} IS NOT NULL ORDER BY ${order}`);
  return collectViolations(current, next, {
    emptyIds: () => emptyIds,
    values: () => rows.map((r) => ({ id: r.id, value: decode.decode(r.v, current) })),
  });
}

/** The data probe's answers, each read now through `read` (tests and benchmarks of the probe; not part of Store). */
export function factsOver(read: <T>(fn: (core: Core, ex: Executor) => Promise<T>) => Promise<T>): {
  [K in keyof DataFacts]: (...args: Parameters<DataFacts[K]>) => Promise<ReturnType<DataFacts[K]>>;
} {
  return {
    recordCount: (object) => read((core, ex) => answer(core, ex, { kind: 'recordCount', object }) as Promise<number>),
    nonNullCount: (object, attribute) => read((core, ex) => answer(core, ex, { kind: 'nonNullCount', object, attribute }) as Promise<number>),
    violations: (object, attribute, next) => read((core, ex) => answer(core, ex, { kind: 'violations', object, attribute, next }) as Promise<Violation[]>),
    documentCount: (object, attribute) => read((core, ex) => answer(core, ex, { kind: 'documentCount', object, attribute }) as Promise<number>),
    recordSample: (object) => read((core, ex) => answer(core, ex, { kind: 'recordSample', object }) as Promise<string[]>),
  };
}
