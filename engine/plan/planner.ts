import { declares, type Declaration, type ObjectDecl } from '../model/declaration.js';
import { renameOf } from '../model/renames.js';
import { relationTarget } from '../model/types/registry.js';
import { isOwnedBySource, type StoredObject, type StoredSource, type StoredView } from '../model/stored.js';
import { diffAttributes, renameClashes, specOf } from './attributes.js';
import type { DataFacts } from './facts.js';
import * as msg from './messages.js';
import { nameConflict, objectChanges, ownershipConflict, ownsObject } from './objects.js';
import type { Conflict, Plan, PlanSummary, Step, StepAction } from './types.js';
import { diffRoles, roleReferenceConflicts, type PlannedRole } from './roles.js';
import { diffViews, viewReferenceConflicts } from './views.js';
import { planHash } from './hash.js';

export interface PlanInput {
  sourceId: string;
  declaration: Declaration;
  objects: StoredObject[];
  views: StoredView[];
  source: StoredSource | undefined;
  facts: DataFacts;
  /** Custom roles with the active keys that hold them (absent: none stored). */
  roles?: readonly PlannedRole[];
}

/**
 * The order steps apply in (issue 4): renames first so later steps use the new names;
 * views that go away before what they show; objects created before attributes that
 * relate to them; relation attributes dropped before the objects they target; views
 * last, once every object and column they name exists.
 */
const PHASE: Record<StepAction, number> = {
  rename_object: 0,
  rename_attribute: 1,
  drop_view: 2,
  create_object: 3,
  change_object: 4,
  add_attribute: 5,
  change_attribute: 6,
  drop_attribute: 7,
  drop_object: 8,
  create_view: 9,
  change_view: 10,
  rename_role: 11,
  drop_role: 12,
  create_role: 13,
  change_role: 14,
};

/**
 * The pure planner: (declaration, stored schema, data facts) → plan. Synchronous, no
 * I/O; every data question goes through `facts`. Deterministic: steps follow the
 * declaration's order within each phase, then the store's order.
 */
export function planPush(input: PlanInput): Plan {
  return plan(input, undefined);
}

/**
 * The planner as the store's data probe runs it (engine/store/sql/probe.ts): the same
 * inputs on every run, only `facts` answering more each time. What one declared object
 * contributes to the plan is a pure function of those fixed inputs and of the facts it
 * asks, so an object that asked nothing contributes the same on every run: it is planned
 * once and its part reused (on a 1,000-object push the probe's second run planned 999
 * unchanged objects again). An object that asked a question is planned again with the
 * answers. Each run returns what `planPush` returns with the same facts
 * (test/unit/plan-memo.property.test.ts).
 */
export function pushPlanner(input: Omit<PlanInput, 'facts'>): (facts: DataFacts) => Plan {
  const memo: PlanMemo = { quiet: new Map() };
  return (facts) => plan({ ...input, facts }, memo);
}

/** What pushPlanner's runs share: the quiet objects' parts, and what every run derives alike from the inputs. */
interface PlanMemo {
  /** The parts, by declared object, of earlier runs that asked no data question. */
  quiet: Map<string, ObjectPart>;
  stored?: ReadonlyMap<string, StoredObject>;
  renamed?: ReadonlyMap<string, string>;
}

/** What one declared object adds to the plan, in the order the loop over objects adds it. */
interface ObjectPart {
  steps: Step[];
  conflicts: Conflict[];
  /** Its create_object step, ordered with the others after the loop. */
  create?: Step;
  /** [stored name, declared name] when the declaration keeps a stored object. */
  kept?: [string, string];
}

/** The inputs every object is planned with. */
interface PlanContext {
  sourceId: string;
  declaration: Declaration;
  stored: ReadonlyMap<string, StoredObject>;
  prev: Declaration | undefined;
  facts: DataFacts;
  renamed: ReadonlyMap<string, string>;
  objectExists: (name: string) => boolean;
}

/** `memo`: shared by the runs of one pushPlanner (same inputs, facts answering more). */
function plan(input: PlanInput, memo: PlanMemo | undefined): Plan {
  const { sourceId, declaration } = input;
  let questions = 0;
  const quiet = memo?.quiet;
  const facts: DataFacts = quiet ? counted(input.facts, () => questions++) : input.facts;
  const steps: Step[] = [];
  const conflicts: Conflict[] = [];
  const stored = memo?.stored ?? new Map(input.objects.map((o) => [o.name, o]));
  const prev = input.source?.declaration;
  /** stored name → declared name, for every stored object this declaration keeps. */
  const kept = new Map<string, string>();
  const creates: Step[] = [];
  const renamed = memo?.renamed ?? renamesOf(declaration);
  if (memo) Object.assign(memo, { stored, renamed });
  const objectExists = (name: string): boolean => declares(declaration.objects, name) || stored.has(name);
  const ctx: PlanContext = { sourceId, declaration, stored, prev, facts, renamed, objectExists };

  for (const [name, decl] of Object.entries(declaration.objects)) {
    let part = quiet?.get(name);
    if (!part) {
      const asked = questions;
      part = planObject(name, decl, ctx);
      if (questions === asked) quiet?.set(name, part);
    }
    steps.push(...part.steps);
    conflicts.push(...part.conflicts);
    if (part.create) creates.push(part.create);
    if (part.kept) kept.set(part.kept[0], part.kept[1]);
  }
  steps.push(...orderCreates(creates));

  // Objects the source owned and no longer declares.
  const dropped = new Set<string>();
  for (const o of input.objects) {
    if (kept.has(o.name) || declares(declaration.objects, o.name) || !ownsObject(o, sourceId)) continue;
    if (o.protected) {
      conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target: o.name, rule: 'protected', ...msg.protectedEntity(o.name) });
      continue;
    }
    const n = facts.recordCount(o.name);
    dropped.add(o.name);
    steps.push({
      action: 'drop_object', target: o.name, object: o.name, destructive: n > 0,
      label: n > 0 ? 'destructive' : 'change', reason: msg.dropObjectReason(o.name, n), ...(n > 0 ? { affected: n } : {}),
    });
  }
  conflicts.push(...referenceConflicts(sourceId, dropped, input.objects, declaration, kept));

  const views = diffViews(
    sourceId, declaration.views, input.views, new Set(Object.keys(prev?.views ?? {})),
  );
  steps.push(...views.drops, ...views.creates, ...views.changes);
  conflicts.push(...views.conflicts);

  const roles = diffRoles(sourceId, declaration.roles ?? {}, input.roles ?? [], new Set(Object.keys(prev?.roles ?? {})), renamed);
  steps.push(...roles.steps);
  conflicts.push(...roles.conflicts);

  const ordered = steps
    .map((s, i) => ({ s, i }))
    .sort((a, b) => PHASE[a.s.action] - PHASE[b.s.action] || a.i - b.i)
    .map((x) => x.s);
  ordered.splice(0, ordered.length, ...orderDrops(ordered, input.objects));
  conflicts.push(...viewReferenceConflicts(ordered, input.views, declaration.views));
  conflicts.push(...roleReferenceConflicts(ordered, input.roles ?? [], declaration.roles ?? {}));
  return {
    source: sourceId, baseVersion: input.source?.version ?? 0, steps: ordered, conflicts, summary: summarize(ordered, conflicts), planHash: planHash(ordered),
  };
}

/** Object renames of a push (old → new): relation targets naming the old object follow. */
function renamesOf(declaration: Declaration): Map<string, string> {
  const renamed = new Map<string, string>();
  for (const [name, decl] of Object.entries(declaration.objects)) {
    const from = renameOf(name, decl, declaration.objects);
    if (from !== undefined) renamed.set(from, name);
  }
  return renamed;
}

/** One declared object: its rename, create, change and attribute steps, and its conflicts. */
function planObject(name: string, decl: ObjectDecl, ctx: PlanContext): ObjectPart {
  const { sourceId, stored, prev, facts, renamed, objectExists } = ctx;
  const objects = ctx.declaration.objects;
  const steps: Step[] = [];
  const bad = nameConflict(name);
  if (bad) return { steps, conflicts: [bad] };
  let current = stored.get(name);
  const renamedFrom = renameOf(name, decl, objects);
  const clashing = renamedFrom !== undefined && current ? stored.get(renamedFrom) : undefined;
  if (current && clashing && renameClashes(ownsObject(current, sourceId), ownsObject(clashing, sourceId))) {
    // the old object is neither dropped nor renamed: the push stops at the conflict
    // (an object owned elsewhere under the new name is reported as that, first)
    const conflict = ownershipConflict(current, name, sourceId) ?? {
      code: 'SCHEMA_SYNC_CONFLICT', target: name, rule: 'rename_clash', ...msg.renameClash('object', name, clashing.name),
    };
    return { steps, conflicts: [conflict], kept: [clashing.name, name] };
  }
  if (!current && renamedFrom !== undefined) {
    const old = stored.get(renamedFrom);
    if (old) {
      const own = ownershipConflict(old, renamedFrom, sourceId);
      if (own) return { steps, conflicts: [own] };
      if (old.protected) return { steps, conflicts: [{ code: 'SCHEMA_SYNC_CONFLICT', target: old.name, rule: 'protected', ...msg.protectedEntity(old.name) }] };
      current = old;
      steps.push({
        action: 'rename_object', target: name, from: old.name, to: name,
        destructive: false, label: 'change', reason: `renamed from ${old.name}; keeps its records`,
      });
    }
  }
  if (!current) {
    const attrs = diffAttributes({
      sourceId, object: name, storedObject: name, declared: decl.attributes, stored: [],
      previouslyDeclared: new Set(), facts: EMPTY_FACTS, renamed, objectExists,
    });
    return {
      steps,
      conflicts: attrs.conflicts,
      create: { action: 'create_object', target: name, object: name, decl: followRenames(decl, renamed), destructive: false, label: 'additive' },
    };
  }
  const own = ownershipConflict(current, name, sourceId);
  if (own) return { steps, conflicts: [own] };
  const kept: [string, string] = [current.name, name];
  if (current.protected) return { steps, conflicts: [{ code: 'SCHEMA_SYNC_CONFLICT', target: name, rule: 'protected', ...msg.protectedEntity(name) }], kept };
  const changes = objectChanges(current, decl, sourceId);
  if (changes.length > 0) {
    const adopt = current.owner.kind === 'runtime';
    steps.push({
      action: 'change_object', target: name, object: name, changes, destructive: false, label: 'change',
      ...(adopt ? { reason: 'adopts the runtime object; its undeclared attributes stay runtime' } : {}),
    });
  }
  const diff = diffAttributes({
    sourceId, object: name, storedObject: current.name, declared: decl.attributes,
    stored: current.attributes,
    previouslyDeclared: new Set(Object.keys(prev?.objects[current.name]?.attributes ?? {})),
    facts, renamed, objectExists,
  });
  steps.push(...diff.renames, ...diff.adds, ...diff.changes, ...diff.drops);
  return { steps, conflicts: diff.conflicts, kept };
}

/** `facts`, calling `ask` on every question. */
function counted(facts: DataFacts, ask: () => void): DataFacts {
  return {
    recordCount: (object) => (ask(), facts.recordCount(object)),
    nonNullCount: (object, attribute) => (ask(), facts.nonNullCount(object, attribute)),
    violations: (object, attribute, next) => (ask(), facts.violations(object, attribute, next)),
    documentCount: (object, attribute) => (ask(), facts.documentCount(object, attribute)),
    recordSample: (object) => (ask(), facts.recordSample(object)),
  };
}

/** A facts stand-in for objects that do not exist yet: no records, no values. */
const EMPTY_FACTS: DataFacts = { recordCount: () => 0, nonNullCount: () => 0, violations: () => [], documentCount: () => 0, recordSample: () => [] };

/** A new object's relation targets named by an object's old name point at its new name. */
function followRenames(decl: ObjectDecl, renamed: ReadonlyMap<string, string>): ObjectDecl {
  if (renamed.size === 0) return decl;
  let attributes: ObjectDecl['attributes'] | undefined;
  for (const [a, spec] of Object.entries(decl.attributes)) {
    const target = relationTarget(spec);
    const to = target !== undefined ? renamed.get(target) : undefined;
    if (to !== undefined) (attributes ??= { ...decl.attributes })[a] = { ...spec, target: to };
  }
  return attributes ? { ...decl, attributes } : decl;
}

/** Relation attributes that still target a dropped object after this push. */
function referenceConflicts(
  sourceId: string,
  dropped: ReadonlySet<string>,
  objects: StoredObject[],
  declaration: Declaration,
  kept: ReadonlyMap<string, string>,
): Conflict[] {
  if (dropped.size === 0) return [];
  const by = new Map<string, string[]>();
  const note = (target: string | undefined, who: string) => {
    if (target === undefined || !dropped.has(target)) return;
    by.set(target, [...(by.get(target) ?? []), who]);
  };
  for (const [name, decl] of Object.entries(declaration.objects)) {
    for (const [a, spec] of Object.entries(decl.attributes)) note(relationTarget(spec), `${name}.${a}`);
  }
  for (const o of objects) {
    if (dropped.has(o.name)) continue;
    const declaredName = kept.get(o.name);
    for (const a of o.attributes) {
      const target = relationTarget(a);
      if (target === undefined) continue;
      // declared attributes were counted above; the source's own undeclared ones are
      // dropped by this push; runtime ones on kept objects and other owners' stay
      if (declaredName !== undefined && isOwnedBySource(a.owner, sourceId)) continue;
      if (declaredName !== undefined && declares(declaration.objects[declaredName]?.attributes, a.name)) continue;
      if (declaredName === undefined && declares(declaration.objects, o.name)) continue;
      note(target, `${declaredName ?? o.name}.${a.name}`);
    }
  }
  return [...by].map(([object, who]) => ({
    code: 'SCHEMA_OBJECT_REFERENCED' as const, target: object, rule: 'referenced' as const, ...msg.referenced(object, who),
  }));
}

/** New objects: relation targets first where the graph allows (cycles keep declaration order). */
function orderCreates(creates: Step[]): Step[] {
  const names = new Set(creates.map((s) => s.target));
  const done = new Set<string>();
  const out: Step[] = [];
  const visiting = new Set<string>();
  const byName = new Map(creates.map((s) => [s.target, s]));
  const visit = (s: Step) => {
    if (done.has(s.target) || visiting.has(s.target) || s.action !== 'create_object') return;
    visiting.add(s.target);
    for (const spec of Object.values(s.decl.attributes)) {
      const target = relationTarget(spec);
      if (target !== undefined && names.has(target)) {
        const t = byName.get(target);
        if (t) visit(t);
      }
    }
    visiting.delete(s.target);
    done.add(s.target);
    out.push(s);
  };
  for (const s of creates) visit(s);
  return out;
}

/** Dropped objects: those that relate to other dropped objects go before their targets. */
function orderDrops(steps: Step[], objects: StoredObject[]): Step[] {
  const drops = steps.filter((s) => s.action === 'drop_object');
  if (drops.length < 2) return steps;
  const names = new Set(drops.map((d) => d.target));
  const targets = new Map(objects.map((o) => [o.name, o.attributes.flatMap((a) => relationTarget(a) ?? [])]));
  const done = new Set<string>();
  const out: Step[] = [];
  const visiting = new Set<string>();
  const byName = new Map(drops.map((d) => [d.target, d]));
  // post-order over "is targeted by": an object is dropped after everything dropped that targets it
  const referrers = (name: string) => drops.filter((d) => d.target !== name && (targets.get(d.target) ?? []).includes(name));
  const visit = (d: Step) => {
    if (done.has(d.target) || visiting.has(d.target)) return;
    visiting.add(d.target);
    for (const r of referrers(d.target)) if (names.has(r.target)) visit(r);
    visiting.delete(d.target);
    done.add(d.target);
    out.push(d);
  };
  for (const d of drops) visit(byName.get(d.target) ?? d);
  const first = steps.findIndex((s) => s.action === 'drop_object');
  const rest: Step[] = steps.filter((s) => s.action !== 'drop_object');
  rest.splice(first, 0, ...out);
  return rest;
}

function summarize(steps: Step[], conflicts: Conflict[]): PlanSummary {
  const s: PlanSummary = { create: 0, change: 0, drop: 0, destructive: 0, conflicts: conflicts.length };
  for (const step of steps) {
    if (step.action === 'create_object' || step.action === 'add_attribute' || step.action === 'create_view' || step.action === 'create_role') s.create++;
    else if (step.action === 'drop_object' || step.action === 'drop_attribute' || step.action === 'drop_view' || step.action === 'drop_role') s.drop++;
    else s.change++;
    if (step.destructive) s.destructive++;
  }
  return s;
}

export { specOf };
