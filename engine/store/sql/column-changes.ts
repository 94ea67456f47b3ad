import type { AttributeSpec } from '../../model/attribute.js';
import type { StoredObject } from '../../model/stored.js';
import { sameValue } from '../../plan/compare.js';
import type { Step } from '../../plan/types.js';
import type { ColumnChange, Executor, SchemaDdl } from '../port.js';
import { specOfStored } from './catalog-rows.js';
import { rebuildsColumn } from './schema-attributes.js';

/**
 * An object's column changes of one push, made at once (SchemaDdl.changeColumns; issue 14
 * "sync add-attribute / type change on 1,000 objects"): the plan applier (apply.ts) reads,
 * at an object's first attribute step, which column changes that object's steps will ask
 * for (plannedColumnChanges), and hands the steps a SchemaDdl (foldingDdl) that makes them
 * all at the first of those calls and lets the later ones through as done. Every step still
 * runs its own checks, catalog rows, backfill, index and search-index upkeep, in the same
 * order: after the first change the table simply has its end shape already. The backfills
 * and checks of a step read only that step's column, which no later change of the same push
 * touches (one change per attribute and push, the planner's rule), so they read the same
 * values either way.
 *
 * A push runs in one write transaction; nothing else writes between its steps (the
 * driver's queue holds the connection from BEGIN to COMMIT on SQLite, the table's ACCESS
 * EXCLUSIVE lock on PostgreSQL), so the table seen at each step is the one this push left.
 */

/**
 * The column changes the steps of `o` from here on will ask for, in the order they ask
 * (apply.ts's handlers call the SchemaDdl member of each, schema-attributes.ts decides):
 * a rename → renameColumn, an add → addColumn, a change that needs a new column type →
 * changeColumnType (rebuildsColumn, the one rule), a drop → dropColumn. `steps` are the
 * plan's remaining steps; those of other objects are skipped. Undefined when the steps do
 * not fit the stored object (a name taken, a name missing): the steps then run one by one
 * and fail with their own errors.
 */
export function plannedColumnChanges(o: StoredObject, steps: readonly Step[]): ColumnChange[] | undefined {
  const columns = new Map<string, { id: string; spec: AttributeSpec }>(o.attributes.map((a) => [a.name, { id: a.id, spec: specOfStored(a) }]));
  const out: ColumnChange[] = [];
  for (const s of steps) {
    if (!('object' in s) || s.object !== o.name) continue;
    if (s.action === 'rename_attribute') {
      const c = columns.get(s.from);
      if (!c || columns.has(s.to)) return undefined;
      columns.delete(s.from);
      columns.set(s.to, { id: c.id, spec: { ...c.spec, name: s.to } });
      out.push({ kind: 'rename', from: s.from, to: s.to });
    } else if (s.action === 'add_attribute') {
      if (columns.has(s.spec.name)) return undefined;
      columns.set(s.spec.name, { id: '', spec: s.spec });
      out.push({ kind: 'add', spec: s.spec });
    } else if (s.action === 'change_attribute') {
      const c = columns.get(s.attribute);
      if (!c) return undefined;
      const next = { ...s.to, name: s.attribute };
      if (rebuildsColumn(c.spec, next)) out.push({ kind: 'retype', attributeId: c.id, from: c.spec, to: next });
      c.spec = next;
    } else if (s.action === 'drop_attribute') {
      const c = columns.get(s.attribute);
      if (!c) return undefined;
      columns.delete(s.attribute);
      out.push({ kind: 'drop', attributeId: c.id, name: s.attribute });
    }
  }
  return out;
}

/** The reference meaning of changeColumns: each change by its own member, in order (PostgreSQL's way). */
export async function changeColumnsOneByOne(ddl: SchemaDdl, tx: Executor, object: string, changes: readonly ColumnChange[]): Promise<void> {
  for (const c of changes) {
    if (c.kind === 'add') await ddl.addColumn(tx, object, c.spec);
    else if (c.kind === 'rename') await ddl.renameColumn(tx, object, c.from, c.to);
    else if (c.kind === 'retype') await ddl.changeColumnType(tx, object, c.attributeId, c.from, c.to);
    else await ddl.dropColumn(tx, object, c.attributeId, c.name);
  }
}

/** A SchemaDdl for the plan applier that makes each planned object's column changes at once. */
export interface FoldingDdl extends SchemaDdl {
  /** The column changes the steps of `object` will ask for from now on (plannedColumnChanges). */
  plan(object: string, changes: readonly ColumnChange[]): void;
  /** After the last step: every planned change was asked for (else the push fails, and rolls back). */
  finish(): void;
}

export function foldingDdl(real: SchemaDdl): FoldingDdl {
  const queues = new Map<string, { changes: readonly ColumnChange[]; next: number }>();
  /** A step asks for `change`: the first of its object's planned changes makes them all, the later ones were made with it. */
  const take = async (tx: Executor, object: string, change: ColumnChange, alone: () => Promise<void>): Promise<void> => {
    const q = queues.get(object);
    if (!q) return alone();
    const expected = q.changes[q.next];
    // The plan was read wrong if a step asks for anything else: fail the push rather than
    // leave a table that differs from the one the steps one by one would have made.
    if (!expected || !sameChange(expected, change)) throw new Error(`column change of ${object} out of the push's planned order`);
    if (q.next === 0) await real.changeColumns(tx, object, q.changes);
    q.next += 1;
    if (q.next === q.changes.length) queues.delete(object);
  };
  return {
    ...real,
    addColumn: (tx, object, spec) => take(tx, object, { kind: 'add', spec }, () => real.addColumn(tx, object, spec)),
    renameColumn: (tx, object, from, to) => take(tx, object, { kind: 'rename', from, to }, () => real.renameColumn(tx, object, from, to)),
    changeColumnType: (tx, object, attributeId, from, to) =>
      take(tx, object, { kind: 'retype', attributeId, from, to }, () => real.changeColumnType(tx, object, attributeId, from, to)),
    dropColumn: (tx, object, attributeId, name) => take(tx, object, { kind: 'drop', attributeId, name }, () => real.dropColumn(tx, object, attributeId, name)),
    plan(object, changes) {
      // One change gains nothing from folding: the step makes it by its own member.
      if (changes.length > 1) queues.set(object, { changes, next: 0 });
    },
    finish() {
      const left = [...queues.keys()];
      if (left.length > 0) throw new Error(`planned column changes of ${left.join(', ')} were not all asked for`);
    },
  };
}

/** The same change: the same column(s), and for a type change the same specs (key order aside: one went through the catalog; plan/compare.ts sameValue). */
function sameChange(a: ColumnChange, b: ColumnChange): boolean {
  if (a.kind === 'add' && b.kind === 'add') return sameValue(a.spec, b.spec);
  if (a.kind === 'rename' && b.kind === 'rename') return a.from === b.from && a.to === b.to;
  if (a.kind === 'retype' && b.kind === 'retype') return a.attributeId === b.attributeId && sameValue(a.from, b.from) && sameValue(a.to, b.to);
  if (a.kind === 'drop' && b.kind === 'drop') return a.attributeId === b.attributeId && a.name === b.name;
  return false;
}

