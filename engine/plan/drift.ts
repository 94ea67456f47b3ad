import type { Declaration } from '../model/declaration.js';
import { specOf } from './attributes.js';
import { attributeChanges, sameValue } from './compare.js';
import { declOf } from './roles.js';

/**
 * `schemasync drift` (contract.md §4): three states of a source — the declaration last
 * applied (stored on the instance with the source), what the instance holds now (its
 * objects, attributes, views and roles owned by the source), and the files — compared entity
 * by entity (`object`, `object.attribute`, `view:name`, `role:name`). Each difference is classified:
 * - `pending`: the files moved, the instance did not (an edit not yet synced);
 * - `runtime`: the instance moved outside the source, the files did not;
 * - `both`: the instance and the files each moved away from what was applied.
 * Pure: the command fetches the three states; attributes compare with the planner's own
 * field comparison, so what drift calls equal is what plan calls "no change".
 */
export type DriftKind = 'pending' | 'runtime' | 'both';

export interface DriftItem {
  target: string;
  kind: DriftKind;
  /** The entity in each state, or absent where it does not exist. */
  applied?: unknown;
  instance?: unknown;
  files?: unknown;
}

export interface DriftReport {
  source: string;
  version: number;
  items: DriftItem[];
  summary: Record<DriftKind, number>;
}

type Flat = Map<string, { value: unknown; same: (other: unknown) => boolean }>;

function flatten(d: Declaration): Flat {
  const out: Flat = new Map();
  for (const [name, o] of Object.entries(d.objects ?? {})) {
    const head = { label: o.label, description: o.description };
    out.set(name, { value: head, same: (x) => sameValue(clean(head), clean(x)) });
    for (const [a, decl] of Object.entries(o.attributes ?? {})) {
      const spec = specOf(a, decl);
      out.set(`${name}.${a}`, { value: spec, same: (x) => attributeChanges(spec, x as typeof spec).length === 0 && attributeChanges(x as typeof spec, spec).length === 0 });
    }
  }
  for (const [name, v] of Object.entries(d.views ?? {})) out.set(`view:${name}`, { value: v, same: (x) => sameValue(clean(v), clean(x)) });
  for (const [name, r] of Object.entries(d.roles ?? {})) {
    const role = declOf(r);
    out.set(`role:${name}`, { value: role, same: (x) => sameValue(clean(role), clean(x)) });
  }
  return out;
}

const clean = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null)) as unknown;

function equal(a: Flat, b: Flat, key: string): boolean {
  const x = a.get(key);
  const y = b.get(key);
  if (x === undefined || y === undefined) return x === y;
  return x.same(y.value);
}

export function compareDrift(input: { source: string; version: number; applied: Declaration; instance: Declaration; files: Declaration }): DriftReport {
  const applied = flatten(input.applied);
  const instance = flatten(input.instance);
  const files = flatten(input.files);
  const keys = [...new Set([...files.keys(), ...applied.keys(), ...instance.keys()])];
  const items: DriftItem[] = [];
  for (const key of keys) {
    const instanceMoved = !equal(applied, instance, key);
    const filesMoved = !equal(applied, files, key);
    if (!instanceMoved && !filesMoved) continue;
    const kind: DriftKind = instanceMoved && filesMoved ? 'both' : instanceMoved ? 'runtime' : 'pending';
    const item: DriftItem = { target: key, kind };
    if (applied.has(key)) item.applied = applied.get(key)!.value;
    if (instance.has(key)) item.instance = instance.get(key)!.value;
    if (files.has(key)) item.files = files.get(key)!.value;
    items.push(item);
  }
  const summary: Record<DriftKind, number> = { pending: 0, runtime: 0, both: 0 };
  for (const i of items) summary[i.kind]++;
  return { source: input.source, version: input.version, items, summary };
}
