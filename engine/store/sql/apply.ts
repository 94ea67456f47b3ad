import type { AttributeSpec } from '../../model/attribute.js';
import type { Declaration } from '../../model/declaration.js';
import type { Owner } from '../../model/stored.js';
import { specOf } from '../../plan/attributes.js';
import type { Plan, Step, StepAction } from '../../plan/types.js';
import type { Executor } from '../port.js';
import { specOfStored } from './catalog-rows.js';
import type { Core } from './context.js';
import { dropRole, renameRole, upsertRole } from './roles.js';
import { foldingDdl, plannedColumnChanges } from './column-changes.js';
import { applyAttributeChange, dropAttribute, insertAttribute } from './schema-attributes.js';
import { changeObjectInfo, dropObject, insertObject, renameObject } from './schema-objects.js';
import { now } from './time.js';
import { dropView, upsertView } from './views.js';
import { typeDef } from '../../model/types/registry.js';

/**
 * The plan applier (issue 4): one function per step action, `Record<StepAction, …>` so a
 * missing case fails to compile. Runs inside the caller's transaction; any throw rolls the
 * whole push back. Each step calls the module that owns what it changes (schema-objects,
 * schema-attributes, views, roles); none writes another module's tables. Returns the
 * source's new version.
 */
type Handler<A extends StepAction> = (step: Extract<Step, { action: A }>, ctx: ApplyContext) => Promise<void>;

interface ApplyContext {
  core: Core;
  tx: Executor;
  owner: Owner;
  /** Relation attributes of new objects whose target is created later in the same plan. */
  deferred: { object: string; spec: AttributeSpec }[];
}

const HANDLERS: { [A in StepAction]: Handler<A> } = {
  async create_object(step, { core, tx, owner, deferred }) {
    const specs = Object.entries(step.decl.attributes).map(([name, decl]) => specOf(name, decl));
    const objects = await core.catalog.objects(tx);
    const known = (target: string | undefined): boolean => target === step.object || (target !== undefined && objects.has(target));
    const now_ = specs.filter((s) => typeDef(s.type).reference !== 'record' || known(s.target));
    for (const s of specs) if (!now_.includes(s)) deferred.push({ object: step.object, spec: s });
    await insertObject(core, tx, step.object, { label: step.decl.label, description: step.decl.description }, now_, owner);
  },
  async drop_object(step, { core, tx }) {
    await dropObject(core, tx, await core.catalog.require(tx, step.object));
  },
  async rename_object(step, { core, tx }) {
    await renameObject(core, tx, step.from, step.to);
  },
  async change_object(step, { core, tx, owner }) {
    const o = await core.catalog.require(tx, step.object);
    let label = o.label ?? null;
    let description = o.description ?? null;
    for (const c of step.changes) {
      if (c.field === 'label') label = (c.to as string | undefined) ?? null;
      if (c.field === 'description') description = (c.to as string | undefined) ?? null;
    }
    await changeObjectInfo(core, tx, o.name, { label, description }, owner);
  },
  async add_attribute(step, { core, tx, owner }) {
    await insertAttribute(core, tx, step.object, step.spec, owner);
  },
  async drop_attribute(step, { core, tx }) {
    const o = await core.catalog.require(tx, step.object);
    const a = o.attributes.find((x) => x.name === step.attribute);
    if (!a) throw new Error(`attribute ${step.target} is not stored`);
    await dropAttribute(core, tx, o.name, a);
  },
  async rename_attribute(step, { core, tx }) {
    const o = await core.catalog.require(tx, step.object);
    const a = o.attributes.find((x) => x.name === step.from);
    if (!a) throw new Error(`attribute ${step.object}.${step.from} is not stored`);
    await applyAttributeChange(core, tx, o.name, step.from, { ...specOfStored(a), name: step.to }, { backfill: false });
  },
  async change_attribute(step, { core, tx, owner }) {
    const o = await core.catalog.require(tx, step.object);
    const a = o.attributes.find((x) => x.name === step.attribute);
    if (!a) throw new Error(`attribute ${step.target} is not stored`);
    const next = { ...step.to, name: step.attribute };
    await applyAttributeChange(core, tx, o.name, step.attribute, next, {
      backfill: step.backfill !== undefined,
      ...(step.adopt ? { owner } : {}),
    });
  },
  async create_view(step, { tx, owner }) {
    await upsertView(tx, step.view, step.decl, owner);
  },
  async change_view(step, { tx, owner }) {
    await upsertView(tx, step.view, step.to, owner);
  },
  async drop_view(step, { tx }) {
    await dropView(tx, step.view);
  },
  async create_role(step, { tx, owner }) {
    await upsertRole(tx, step.role, step.decl, owner);
  },
  async change_role(step, { tx, owner }) {
    await upsertRole(tx, step.role, step.to, owner);
  },
  async rename_role(step, { tx }) {
    await renameRole(tx, step.from, step.to);
  },
  async drop_role(step, { tx }) {
    await dropRole(tx, step.role);
  },
};

const ATTRIBUTE_STEPS: ReadonlySet<StepAction> = new Set(['rename_attribute', 'add_attribute', 'change_attribute', 'drop_attribute']);

export async function applyPlan(core: Core, tx: Executor, plan: Plan, sourceId: string, declaration: Declaration): Promise<number> {
  // Each object's column changes of this push are made at once, at its first attribute step
  // (column-changes.ts): the steps run with a SchemaDdl that knows which changes are coming.
  const ddl = foldingDdl(core.ddl);
  const ctx: ApplyContext = { core: { ...core, ddl }, tx, owner: { kind: 'source', id: sourceId }, deferred: [] };
  // Each object's attribute steps, in plan order, gathered once (steps name objects as they
  // are after any rename, so the key holds across the plan).
  const attributeSteps = new Map<string, Step[]>();
  for (const step of plan.steps) {
    if (!ATTRIBUTE_STEPS.has(step.action) || !('object' in step)) continue;
    const list = attributeSteps.get(step.object);
    if (list) list.push(step);
    else attributeSteps.set(step.object, [step]);
  }
  // The search index's per-object upkeep once per object touched, not once per step (port.ts).
  await core.fulltext.schemaBatch(tx, async () => {
    for (const step of plan.steps) {
      const steps = ATTRIBUTE_STEPS.has(step.action) && 'object' in step ? attributeSteps.get(step.object) : undefined;
      if (steps && steps[0] === step && 'object' in step) {
        // Read now, not before the push: an object rename earlier in the plan has moved it.
        const o = await core.catalog.find(tx, step.object);
        const changes = o && plannedColumnChanges(o, steps);
        if (changes) ddl.plan(step.object, changes);
      }
      await (HANDLERS[step.action] as Handler<StepAction>)(step as never, ctx);
    }
    ddl.finish();
    for (const d of ctx.deferred) await insertAttribute(ctx.core, tx, d.object, d.spec, ctx.owner);
  });
  const row = await tx.get<{ version: number }>('SELECT version FROM _ss_sources WHERE id = ?', [sourceId]);
  const version = Number(row?.version ?? 0) + 1;
  await tx.run(
    'INSERT INTO _ss_sources (id, version, applied_at, declaration) VALUES (?, ?, ?, ?) ' +
      'ON CONFLICT(id) DO UPDATE SET version = excluded.version, applied_at = excluded.applied_at, declaration = excluded.declaration',
    [sourceId, version, now(), JSON.stringify(declaration)],
  );
  return version;
}
