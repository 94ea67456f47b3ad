import type { AttributeSpec } from '../../engine/model/attribute.js';
import type { Declaration, ObjectDecl } from '../../engine/model/declaration.js';
import type { Owner, StoredAttribute, StoredObject, StoredView } from '../../engine/model/stored.js';
import { SYSTEM_ATTRIBUTES } from '../../engine/model/names.js';
import { storedSpec } from '../../engine/plan/attributes.js';
import type { DataFacts, Violation } from '../../engine/plan/facts.js';
import { collectViolations } from '../../engine/plan/violations.js';
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

  /** The product's rules (engine/plan/violations.ts) over the rows held here, oldest first, as the store reads its column. */
  violations(object: string, attribute: string, next: AttributeSpec): Violation[] {
    const stored = this.objects.find((o) => o.name === object)?.attributes.find((a) => a.name === attribute && !a.system);
    if (!stored) return [];
    const rows = this.rows[object] ?? [];
    const empty = (v: unknown) => v === undefined || v === null;
    return collectViolations(storedSpec(stored), next, {
      emptyIds: () => rows.filter((r) => empty(r.values[attribute])).map((r) => r.id),
      values: () => rows.filter((r) => !empty(r.values[attribute])).map((r) => ({ id: r.id, value: r.values[attribute] })),
    });
  }
}
