import { randomUUID } from 'node:crypto';
import { ServiceError } from '../../engine/errors.js';
import type { Declaration } from '../../engine/model/declaration.js';
import type { RecordOut, StoredObject, StoredSource, StoredView } from '../../engine/model/stored.js';
import { typeDef } from '../../engine/model/types/registry.js';
import { planPush, refusal } from '../../engine/plan/index.js';
import type { Step, StepAction } from '../../engine/plan/types.js';
import type { PushOptions, PushResult, Store } from '../../engine/store/types.js';
import { asyncStore, fakeStore, type SyncStore } from '../api/fake-store.js';
import { MemoryFacts, storedObject, type Rows } from '../unit/plan-facts.js';

/**
 * A schema-and-records store in memory that pushes with the real planner and applies its
 * steps in order: lets the CLI tests drive plan/sync/pull through the real HTTP routes
 * without the SQLite store, and checks that plan steps apply in sequence.
 */
export function memoryStore(): Store {
  let objects: StoredObject[] = [];
  let views: StoredView[] = [];
  const sources = new Map<string, StoredSource>();
  const rows: Rows = {};
  const T = () => new Date().toISOString();
  const obj = (name: string) => {
    const o = objects.find((x) => x.name === name);
    if (!o) throw new ServiceError('SCHEMA_OBJECT_NOT_FOUND', `No object "${name}"`);
    return o;
  };

  const apply: { [A in StepAction]: (s: Extract<Step, { action: A }>, source: string) => void } = {
    create_object: (s, source) => {
      objects.push(storedObject(s.object, s.decl, { kind: 'source', id: source }));
      rows[s.object] = [];
    },
    drop_object: (s) => {
      objects = objects.filter((o) => o.name !== s.object);
      delete rows[s.object];
    },
    rename_object: (s) => {
      obj(s.from).name = s.to;
      rows[s.to] = rows[s.from] ?? [];
      delete rows[s.from];
    },
    change_object: (s, source) => {
      const o = obj(s.object);
      for (const c of s.changes) {
        if (c.field === 'owner') o.owner = { kind: 'source', id: source };
        else if (c.to === undefined) delete (o as unknown as Record<string, unknown>)[c.field];
        else (o as unknown as Record<string, unknown>)[c.field] = c.to;
      }
    },
    add_attribute: (s, source) => {
      const { name, ...spec } = s.spec;
      obj(s.object).attributes.push({ ...spec, name, id: randomUUID(), protected: false, system: false, owner: { kind: 'source', id: source }, createdAt: T(), updatedAt: T() });
      if (s.spec.default !== undefined) for (const r of rows[s.object] ?? []) r.values[name] = s.spec.default;
    },
    drop_attribute: (s) => {
      const o = obj(s.object);
      o.attributes = o.attributes.filter((a) => a.name !== s.attribute);
      for (const r of rows[s.object] ?? []) delete r.values[s.attribute];
    },
    rename_attribute: (s) => {
      const a = obj(s.object).attributes.find((x) => x.name === s.from)!;
      a.name = s.to;
      for (const r of rows[s.object] ?? []) {
        r.values[s.to] = r.values[s.from];
        delete r.values[s.from];
      }
    },
    change_attribute: (s, source) => {
      const o = obj(s.object);
      const i = o.attributes.findIndex((a) => a.name === s.attribute);
      const old = o.attributes[i]!;
      o.attributes[i] = { ...s.to, id: old.id, protected: false, system: false, owner: { kind: 'source', id: source }, createdAt: old.createdAt, updatedAt: T() };
      if (s.convert) {
        for (const r of rows[s.object] ?? []) {
          const v = r.values[s.attribute];
          if (v !== null && v !== undefined) r.values[s.attribute] = typeDef(s.to.type).convertFrom(v) ?? null;
        }
      }
    },
    create_view: (s, source) => void views.push({ ...s.decl, name: s.view, owner: { kind: 'source', id: source } }),
    change_view: (s, source) => {
      views = views.map((v) => (v.name === s.view ? { ...s.to, name: s.view, owner: { kind: 'source', id: source } } : v));
    },
    drop_view: (s) => {
      views = views.filter((v) => v.name !== s.view);
    },
    // Roles are not modelled here: the SQLite store's tests cover them (test/api/roles-sync.test.ts).
    create_role: () => { throw new Error('roles are not modelled by the memory store'); },
    change_role: () => { throw new Error('roles are not modelled by the memory store'); },
    rename_role: () => { throw new Error('roles are not modelled by the memory store'); },
    drop_role: () => { throw new Error('roles are not modelled by the memory store'); },
  };

  const mine: Partial<SyncStore> = {
    listObjects: () => objects,
    findObject: (n) => objects.find((o) => o.name === n || o.id === n),
    requireObject: (n) => obj(n),
    listViews: () => views,
    findView: (n) => views.find((v) => v.name === n),
    // no custom roles here (see the role handlers above)
    listRoles: () => [],
    findRole: () => undefined,
    findSource: (id) => sources.get(id),
    createRecord(object, values): RecordOut {
      obj(object);
      const r = { id: randomUUID(), values: { ...values } };
      (rows[object] ??= []).push(r);
      return { id: r.id, object, version: 1, createdAt: T(), updatedAt: T(), values: r.values };
    },
    getRecord(object, id): RecordOut {
      const r = (rows[obj(object).name] ?? []).find((x) => x.id === id);
      if (!r) throw new ServiceError('SCHEMA_RECORD_NOT_FOUND', 'No record with that id');
      return { id: r.id, object, version: 1, createdAt: T(), updatedAt: T(), values: r.values };
    },
    createObject(input, owner) {
      const attributes = Object.fromEntries((input.attributes ?? []).map(({ name, ...spec }) => [name, spec]));
      const o = storedObject(input.name, { attributes, ...(input.label !== undefined ? { label: input.label } : {}) }, owner);
      objects.push(o);
      rows[input.name] = [];
      return o;
    },
    updateAttribute(object, attribute, patch) {
      const a = obj(object).attributes.find((x) => x.name === attribute);
      if (!a) throw new ServiceError('SCHEMA_ATTRIBUTE_NOT_FOUND', `No attribute "${attribute}"`);
      Object.assign(a, patch, { updatedAt: T() });
      return a;
    },
    addAttribute(object, spec, owner) {
      const { name, ...rest } = spec;
      const a = { ...rest, name, id: randomUUID(), protected: false, system: false, owner, createdAt: T(), updatedAt: T() };
      obj(object).attributes.push(a);
      return a;
    },
    deleteAttribute(object, attribute) {
      const o = obj(object);
      const i = o.attributes.findIndex((x) => x.name === attribute);
      if (i < 0) throw new ServiceError('SCHEMA_ATTRIBUTE_NOT_FOUND', `No attribute "${attribute}"`);
      o.attributes.splice(i, 1);
      for (const r of rows[o.name] ?? []) delete r.values[attribute];
    },
    pushSource(id: string, declaration: Declaration, options: PushOptions): PushResult {
      const source = sources.get(id);
      const plan = planPush({ sourceId: id, declaration, objects, views, source, facts: new MemoryFacts(objects, rows) });
      const current = source?.version ?? 0;
      if (options.dryRun) return { version: current, applied: false, plan };
      const err = refusal(plan, { ...(options.allowDestructive !== undefined ? { allowDestructive: options.allowDestructive } : {}), ...(options.ifMatch !== undefined ? { ifMatch: options.ifMatch } : {}), currentVersion: current });
      if (err) throw err;
      if (plan.steps.length === 0 && source) {
        sources.set(id, { ...source, declaration: structuredClone(declaration) }); // as engine/store/push.ts
        return { version: current, applied: true, plan };
      }
      for (const s of plan.steps) (apply[s.action] as (x: Step, src: string) => void)(s, id);
      sources.set(id, { id, version: current + 1, appliedAt: T(), declaration: structuredClone(declaration) });
      return { version: current + 1, applied: true, plan };
    },
  };
  const base = fakeStore();
  return asyncStore(mine, (prop) => (base as unknown as Record<string, unknown>)[prop]);
}
