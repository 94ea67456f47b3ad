import type { AttributeSpec } from '../../engine/model/attribute.js';
import type { Declaration, ObjectDecl } from '../../engine/model/declaration.js';
import type { Owner, StoredAttribute, StoredObject, StoredView } from '../../engine/model/stored.js';
import { SYSTEM_ATTRIBUTES } from '../../engine/model/names.js';
import { keepsValue, typeDef } from '../../engine/model/types/registry.js';
import type { DataFacts, Violation, ViolationRule } from '../../engine/plan/facts.js';
import { SAMPLE_IDS } from '../../engine/plan/facts.js';

/**
 * Builders for planner tests: a stored schema built from a declaration (what a store
 * holds after applying it) and an in-memory DataFacts over plain rows.
 */
export type Rows = Record<string, { id: string; values: Record<string, unknown> }[]>;

const T = '2026-01-01T00:00:00.000Z';

export function storedFrom(decl: Declaration, owner: Owner = { kind: 'source', id: 'crm' }): StoredObject[] {
  return Object.entries(decl.objects).map(([name, o]) => storedObject(name, o, owner));
}

export function storedObject(name: string, o: ObjectDecl, owner: Owner, extra: Partial<StoredObject> = {}): StoredObject {
  const system: StoredAttribute[] = SYSTEM_ATTRIBUTES.map((a) => ({
    id: `${name}.${a}`, name: a, type: 'text', protected: true, system: true, owner: { kind: 'core' }, createdAt: T, updatedAt: T,
  }));
  const attrs: StoredAttribute[] = Object.entries(o.attributes).map(([a, spec]) => {
    const { renamedFrom: _r, ...rest } = spec;
    return { ...rest, name: a, id: `${name}.${a}`, protected: false, system: false, owner, createdAt: T, updatedAt: T };
  });
  return {
    id: `obj-${name}`, name, owner, protected: false, attributes: [...system, ...attrs], createdAt: T, updatedAt: T,
    ...(o.label !== undefined ? { label: o.label } : {}), ...extra,
  };
}

export function storedViews(decl: Declaration, owner: Owner = { kind: 'source', id: 'crm' }): StoredView[] {
  return Object.entries(decl.views).map(([name, v]) => ({ ...v, name, owner }));
}

export class MemoryFacts implements DataFacts {
  constructor(private readonly objects: StoredObject[], private readonly rows: Rows) {}

  recordCount(object: string): number {
    return this.rows[object]?.length ?? 0;
  }

  nonNullCount(object: string, attribute: string): number {
    return (this.rows[object] ?? []).filter((r) => r.values[attribute] !== undefined && r.values[attribute] !== null).length;
  }

  documentCount(object: string, attribute: string): number {
    // rows hold document ids (one or a list) in memory
    return (this.rows[object] ?? []).reduce((n, r) => {
      const v = r.values[attribute];
      return n + (v === undefined || v === null ? 0 : Array.isArray(v) ? v.length : 1);
    }, 0);
  }

  recordSample(object: string): string[] {
    return (this.rows[object] ?? []).slice(0, SAMPLE_IDS).map((r) => r.id);
  }

  violations(object: string, attribute: string, next: AttributeSpec): Violation[] {
    const cur = this.objects.find((o) => o.name === object)?.attributes.find((a) => a.name === attribute);
    const hits = new Map<ViolationRule, string[]>();
    const hit = (rule: ViolationRule, id: string) => hits.set(rule, [...(hits.get(rule) ?? []), id]);
    // unique: every record of a duplicated value counts, the first one too (as engine/store/facts.ts)
    const seen = new Map<string, string>();
    const dupes = new Set<string>();
    for (const r of this.rows[object] ?? []) {
      let v = r.values[attribute];
      if (v === undefined || v === null) {
        if (next.required) hit('required', r.id);
        continue;
      }
      if (cur && cur.type !== next.type) {
        const original = v;
        v = typeDef(next.type).convertFrom(v);
        if (v === undefined) {
          hit('type', r.id);
          // it becomes null: a required attribute refuses it too (as engine/store/facts.ts)
          if (next.required) hit('required', r.id);
          continue;
        }
        const parsed = typeDef(next.type).parse(v, next);
        if (parsed.ok) v = parsed.value;
        if (!keepsValue(cur as AttributeSpec, next, original, v)) hit('lossy', r.id);
      }
      if (cur && cur.type === 'relation' && next.type === 'relation' && cur.target !== next.target) hit('relation_target', r.id);
      const list = Array.isArray(v) ? v : [v];
      if (next.options && list.some((x) => !next.options?.includes(String(x)))) hit('options', r.id);
      if (typeof v === 'string' && ((next.maxLength !== undefined && v.length > next.maxLength) || (next.minLength !== undefined && v.length < next.minLength))) hit('length', r.id);
      if (typeof v === 'number' && ((next.max !== undefined && v > next.max) || (next.min !== undefined && v < next.min))) hit('range', r.id);
      if (typeof v === 'string' && next.pattern !== undefined && !new RegExp(next.pattern).test(v)) hit('pattern', r.id);
      if (next.multiple === false && Array.isArray(v) && v.length > 1) hit('multiple', r.id);
      if (next.unique) {
        const key = JSON.stringify(v);
        const first = seen.get(key);
        if (first === undefined) seen.set(key, r.id);
        else {
          if (!dupes.has(first)) {
            dupes.add(first);
            hit('unique', first);
          }
          hit('unique', r.id);
        }
      }
    }
    return [...hits].map(([rule, ids]) => ({ rule, count: ids.length, sampleIds: ids.slice(0, SAMPLE_IDS) }));
  }
}
