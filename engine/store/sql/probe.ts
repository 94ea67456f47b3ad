import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import { keepsValue, typeDef } from '../../model/types/registry.js';
import { afterBackfill, SAMPLE_IDS, type DataFacts, type Violation, type ViolationRule } from '../../plan/facts.js';
import type { Executor } from '../port.js';
import { specOfStored } from './catalog-rows.js';
import type { Core } from './context.js';
import { convertApiValue } from './convert.js';
import { tableIdent } from './idents.js';
import { intColumn } from './rows.js';

/**
 * engine/plan/facts.ts over the store (architecture.md patterns 1 and 4): the planner stays
 * pure and synchronous, so it cannot await a query. `probeFor` runs it against facts that
 * answer from what an async read pass already found; a question not answered yet is noted
 * (and answered with "nothing stored" meanwhile), read, and the planner runs again with the
 * answers, until it asks nothing new. Every run sees the same transaction, so the last plan
 * is the plan of the stored data; a planner run is pure, so the earlier runs leave nothing.
 * Counts are SQL; violations read the column and run the next spec's parse in JS (the one
 * value validator), so PUT …/attributes/:id and the planner refuse exactly the same data.
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
      if (!o || !o.attributes.some((a) => a.name === q.attribute && a.type === 'document')) return 0;
      return count('SELECT COUNT(*) AS n FROM _ss_documents WHERE object = ? AND attribute = ?', [q.object, q.attribute]);
    case 'recordSample':
      if (!o) return [];
      return (await ex.all<{ id: string }>(`SELECT id FROM ${tableIdent(q.object)} ORDER BY ${core.dialect.insertionOrder} LIMIT ${SAMPLE_IDS}`)).map((r) => r.id);
  }
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

/**
 * Stored values of `object.<current.name>` that break `next` (engine/plan/facts.ts
 * DataFacts.violations): read with the current spec, converted by the registry, judged by
 * the next spec's parse. PUT …/attributes/:id and the planner both come here.
 */
export async function violations(core: Core, ex: Executor, object: string, current: AttributeSpec, next: AttributeSpec): Promise<Violation[]> {
  const codecs = core.codecs;
  const order = core.dialect.insertionOrder;
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
    const rows = await ex.all<{ id: string }>(`SELECT id FROM ${table} WHERE ${col} IS NULL ORDER BY ${order}`);
    for (const r of rows) note('required', r.id);
    firstEmpty = rows[0]?.id;
  }
  const typeChange = current.type !== next.type;
  // One definition of the relation-target rule (issue 4): links stored under the old
  // target would point at records of the wrong object, for the planner and PUT …/attributes/:id alike.
  const retarget = !typeChange && current.type === 'relation' && next.type === 'relation' && current.target !== next.target;
  const values = await ex.all<{ id: string; v: unknown }>(`SELECT id, ${col} AS v FROM ${table} WHERE ${col} IS NOT NULL ORDER BY ${order}`);
  for (const r of values) {
    const converted = convertApiValue(codecs, r.v, current, next);
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
      const api = codecs[current.type].decode(r.v, current);
      if (!keepsValue(current, next, api, parsed?.ok ? parsed.value : converted)) note('lossy', r.id);
    }
    if (next.unique && converted !== null) keys.push([String(parsed?.ok ? codecs[next.type].encode(parsed.value, next) : r.v), r.id]);
  }
  // Duplicates are counted once every empty value is known (stored nulls and values that
  // cannot convert): the one empty value will hold the default, so a stored value equal to
  // it is a duplicate, counted first (it is the record the fill changes).
  const empty = found.get('required');
  if (next.unique && empty && firstEmpty !== undefined && afterBackfill(empty, next) === undefined) {
    const parsed = def.parse(next.default, next);
    if (parsed.ok) unique(String(codecs[next.type].encode(parsed.value, next)), firstEmpty);
  }
  for (const [key, id] of keys) unique(key, id);
  return [...found.values()];
}
