import type { AttributeSpec } from '../../model/attribute.js';
import type { Declaration, ViewDecl } from '../../model/declaration.js';
import type { Owner } from '../../model/stored.js';
import { specOf } from '../../plan/attributes.js';
import type { Plan, Step, StepAction } from '../../plan/types.js';
import { specOfStored } from './catalog.js';
import { now } from './database.js';
import { renameRecordTable } from './ddl.js';
import { afterObjectRename, dropObjectTriggers } from './fulltext.js';
import { dropRole, renameObjectInRoles, renameRole, upsertRole } from './roles.js';
import type { SqliteStore } from './core.js';

/**
 * The plan applier (issue 4): one function per step action, `Record<StepAction, …>` so a
 * missing case fails to compile. Runs inside the caller's transaction; any throw rolls the
 * whole push back. Returns the source's new version.
 */
type Handler<A extends StepAction> = (step: Extract<Step, { action: A }>, ctx: ApplyContext) => void;

interface ApplyContext {
  store: SqliteStore;
  owner: Owner;
  /** Relation attributes of new objects whose target is created later in the same plan. */
  deferred: { object: string; spec: AttributeSpec }[];
}

const HANDLERS: { [A in StepAction]: Handler<A> } = {
  create_object(step, ctx) {
    const specs = Object.entries(step.decl.attributes).map(([name, decl]) => specOf(name, decl));
    const known = (target: string | undefined): boolean => target === step.object || (target !== undefined && ctx.store.findObject(target) !== undefined);
    const now_ = specs.filter((s) => s.type !== 'relation' || known(s.target));
    for (const s of specs) if (!now_.includes(s)) ctx.deferred.push({ object: step.object, spec: s });
    ctx.store.insertObject(step.object, { label: step.decl.label, description: step.decl.description }, now_, ctx.owner);
  },
  drop_object(step, ctx) {
    ctx.store.dropObjectNow(ctx.store.requireObject(step.object));
  },
  rename_object(step, ctx) {
    const { store } = ctx;
    const o = store.requireObject(step.from);
    dropObjectTriggers(store.db, step.from);
    renameRecordTable(store.db, step.from, step.to);
    store.db.prepare('UPDATE _ss_objects SET name = ?, updated_at = ? WHERE id = ?').run(step.to, now(), o.id);
    // Links by name follow the rename: relation targets, views, roles, document slots.
    store.db
      .prepare("UPDATE _ss_attributes SET spec = json_set(spec, '$.target', ?) WHERE json_extract(spec, '$.type') = 'relation' AND json_extract(spec, '$.target') = ?")
      .run(step.to, step.from);
    store.db.prepare("UPDATE _ss_views SET decl = json_set(decl, '$.object', ?) WHERE json_extract(decl, '$.object') = ?").run(step.to, step.from);
    renameObjectInRoles(store.db, step.from, step.to);
    if (store.files) store.db.prepare('UPDATE _ss_documents SET object = ? WHERE object = ?').run(step.to, step.from);
    store.schemaChanged();
    // The index follows in this transaction too (fulltext.ts: its rows and triggers name the object).
    afterObjectRename(store.db, step.from, store.requireObject(step.to));
  },
  change_object(step, ctx) {
    const o = ctx.store.requireObject(step.object);
    let label = o.label ?? null;
    let description = o.description ?? null;
    for (const c of step.changes) {
      if (c.field === 'label') label = (c.to as string | undefined) ?? null;
      if (c.field === 'description') description = (c.to as string | undefined) ?? null;
    }
    ctx.store.db.prepare('UPDATE _ss_objects SET label = ?, description = ?, owner_kind = ?, owner_id = ?, updated_at = ? WHERE id = ?').run(
      label,
      description,
      ctx.owner.kind,
      ctx.owner.id ?? null,
      now(),
      o.id,
    );
    ctx.store.schemaChanged();
  },
  add_attribute(step, ctx) {
    ctx.store.addAttributeNow(step.object, step.spec, ctx.owner);
  },
  drop_attribute(step, ctx) {
    const o = ctx.store.requireObject(step.object);
    const a = o.attributes.find((x) => x.name === step.attribute);
    if (!a) throw new Error(`attribute ${step.target} is not stored`);
    ctx.store.dropAttributeNow(o.name, a);
  },
  rename_attribute(step, ctx) {
    const o = ctx.store.requireObject(step.object);
    const a = o.attributes.find((x) => x.name === step.from);
    if (!a) throw new Error(`attribute ${step.object}.${step.from} is not stored`);
    ctx.store.changeAttributeNow(o.name, step.from, { ...specOfStored(a), name: step.to }, { refuse: false });
  },
  change_attribute(step, ctx) {
    const o = ctx.store.requireObject(step.object);
    const a = o.attributes.find((x) => x.name === step.attribute);
    if (!a) throw new Error(`attribute ${step.target} is not stored`);
    const next = { ...step.to, name: step.attribute };
    ctx.store.changeAttributeNow(o.name, step.attribute, next, {
      refuse: false,
      backfill: step.backfill !== undefined,
      ...(step.adopt ? { owner: ctx.owner } : {}),
    });
  },
  create_view(step, ctx) {
    upsertView(ctx, step.view, step.decl);
  },
  change_view(step, ctx) {
    upsertView(ctx, step.view, step.to);
  },
  drop_view(step, ctx) {
    ctx.store.db.prepare('DELETE FROM _ss_views WHERE name = ?').run(step.view);
  },
  create_role(step, ctx) {
    upsertRole(ctx.store.db, step.role, step.decl, ctx.owner);
  },
  change_role(step, ctx) {
    upsertRole(ctx.store.db, step.role, step.to, ctx.owner);
  },
  rename_role(step, ctx) {
    renameRole(ctx.store.db, step.from, step.to);
  },
  drop_role(step, ctx) {
    dropRole(ctx.store.db, step.role);
  },
};

function upsertView(ctx: ApplyContext, name: string, decl: ViewDecl): void {
  const t = now();
  ctx.store.db
    .prepare(
      'INSERT INTO _ss_views (name, decl, owner_kind, owner_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ' +
        'ON CONFLICT(name) DO UPDATE SET decl = excluded.decl, owner_kind = excluded.owner_kind, owner_id = excluded.owner_id, updated_at = excluded.updated_at',
    )
    .run(name, JSON.stringify(decl), ctx.owner.kind, ctx.owner.id ?? null, t, t);
}

export function applyPlan(store: SqliteStore, plan: Plan, sourceId: string, declaration: Declaration): number {
  const ctx: ApplyContext = { store, owner: { kind: 'source', id: sourceId }, deferred: [] };
  for (const step of plan.steps) {
    (HANDLERS[step.action] as Handler<StepAction>)(step as never, ctx);
  }
  for (const d of ctx.deferred) store.addAttributeNow(d.object, d.spec, ctx.owner);
  const row = store.db.prepare('SELECT version FROM _ss_sources WHERE id = ?').get(sourceId) as { version: number } | undefined;
  const version = (row?.version ?? 0) + 1;
  store.db
    .prepare(
      'INSERT INTO _ss_sources (id, version, applied_at, declaration) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT(id) DO UPDATE SET version = excluded.version, applied_at = excluded.applied_at, declaration = excluded.declaration',
    )
    .run(sourceId, version, now(), JSON.stringify(declaration));
  return version;
}
