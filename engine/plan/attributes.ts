import type { AttributeSpec } from '../model/attribute.js';
import { declares, type AttributeDecl } from '../model/declaration.js';
import { attributeNameProblem, isDeclarableAttributeName } from '../model/names.js';
import { renameOf, withoutRenamedFrom } from '../model/renames.js';
import { claimedBySource, type StoredAttribute } from '../model/stored.js';
import { holdsDocuments, isWidening, relationTarget } from '../model/types/registry.js';
import { attributeChanges, compact, DATA_FIELDS } from './compare.js';
import { afterBackfill, SAMPLE_IDS, type DataFacts } from './facts.js';
import * as msg from './messages.js';
import type { Conflict, Step } from './types.js';

/**
 * The attribute diff of one object that exists in the store (issue 4 "Engine"):
 * add / rename / change / drop, the data conflicts of each change and which steps lose
 * data. `storedObject` is the name the data lives under now (before any object rename),
 * which is what DataFacts is asked about; `object` is the declared name steps target.
 */
export interface AttributeDiffInput {
  sourceId: string;
  object: string;
  storedObject: string;
  declared: Record<string, AttributeDecl>;
  stored: StoredAttribute[];
  /** Attribute names the source declared on this object at its last push. */
  previouslyDeclared: ReadonlySet<string>;
  facts: DataFacts;
  /** Object renames of this push, old name → declared name: relation targets follow them. */
  renamed: ReadonlyMap<string, string>;
  /** Whether an object of this name exists once the push applies (declared, or stored). */
  objectExists: (name: string) => boolean;
}

export interface AttributeDiff {
  renames: Step[];
  adds: Step[];
  changes: Step[];
  drops: Step[];
  conflicts: Conflict[];
}

export function specOf(name: string, decl: AttributeDecl): AttributeSpec {
  return compact({ ...withoutRenamedFrom(decl), name } as AttributeSpec);
}

export function storedSpec(a: StoredAttribute): AttributeSpec {
  const { id: _i, protected: _p, system: _s, owner: _o, createdAt: _c, updatedAt: _u, ...spec } = a;
  return compact(spec as AttributeSpec);
}

const ownedBy = (a: StoredAttribute, sourceId: string, previously: ReadonlySet<string>): boolean => claimedBySource(a.owner, a.name, sourceId, previously);

/**
 * renamedFrom onto a name that exists as well: the rename cannot keep the old data (the
 * new name would be compared or adopted and the old one dropped or left). Not a clash when
 * the rename already happened — the new name is the source's and the old name is someone
 * else's again (a leftover renamedFrom stays a no-op). Objects and attributes alike.
 */
export function renameClashes(newIsOwn: boolean, oldIsOwn: boolean): boolean {
  return !newIsOwn || oldIsOwn;
}

export function diffAttributes(input: AttributeDiffInput): AttributeDiff {
  const { object, storedObject, declared, facts, sourceId } = input;
  const out: AttributeDiff = { renames: [], adds: [], changes: [], drops: [], conflicts: [] };
  const byName = new Map<string, StoredAttribute>();
  for (const a of input.stored) byName.set(a.name, a);
  const consumed = new Set<string>();
  const records = () => facts.recordCount(storedObject);

  for (const name in declared) {
    const decl = declared[name]!;
    const target = `${object}.${name}`;
    const nameProblem = isDeclarableAttributeName(name) ? null : attributeNameProblem(name);
    if (nameProblem) {
      out.conflicts.push({ code: 'SCHEMA_INVALID_ATTRIBUTE_NAME', target, message: nameProblem.message });
      continue;
    }
    // compare the declaration and the stored row in place; copies are made only for steps
    let want = decl as AttributeSpec;
    const declaredTarget = relationTarget(decl);
    if (declaredTarget !== undefined) {
      // a target named by its old name follows this push's object rename (no perpetual diff)
      const resolved = input.renamed.get(declaredTarget) ?? declaredTarget;
      if (!input.objectExists(resolved)) {
        out.conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target, rule: 'missing_target', ...msg.missingRelationTarget(target, declaredTarget) });
        continue;
      }
      if (resolved !== declaredTarget) want = { ...decl, target: resolved } as AttributeSpec;
    }
    let current = byName.get(name);
    let storedName = name;
    const renamedFrom = renameOf(name, decl, declared);
    const clashing = renamedFrom !== undefined && current !== undefined ? byName.get(renamedFrom) : undefined;
    if (current && clashing && !clashing.system && !current.system && renameClashes(ownedBy(current, sourceId, input.previouslyDeclared), ownedBy(clashing, sourceId, input.previouslyDeclared))) {
      // neither adopted in its place nor dropped: the push stops at the conflict
      consumed.add(clashing.name);
      const from = `${object}.${clashing.name}`;
      out.conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target, rule: 'rename_clash', ...msg.renameClash('attribute', target, from) });
      continue;
    }
    // renamedFrom naming nothing stored is a no-op once the new name exists (re-push).
    if (!current && renamedFrom !== undefined) {
      const old = byName.get(renamedFrom);
      if (old && !old.system) {
        if (old.protected) {
          out.conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target: `${object}.${old.name}`, rule: 'protected', ...msg.protectedEntity(`${object}.${old.name}`) });
          continue;
        }
        current = old;
        storedName = old.name;
        out.renames.push({
          action: 'rename_attribute', target, object, from: old.name, to: name,
          destructive: false, label: 'change', reason: `renamed from ${old.name}; keeps its values`,
        });
      }
    }
    if (!current) {
      const next = specOf(name, want as AttributeDecl);
      const n = records();
      // the store writes the default into every existing record (addAttributeNow): the plan says so
      const fills = next.default !== undefined && next.default !== null ? n : 0;
      out.adds.push({
        action: 'add_attribute', target, object, spec: next, destructive: false, label: 'additive',
        ...(fills > 0 ? { affected: fills, reason: msg.defaultFillReason(fills) } : {}),
      });
      if (next.required && next.default === undefined && n > 0) {
        const sampleIds = facts.recordSample(storedObject).slice(0, SAMPLE_IDS);
        out.conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target, rule: 'required', count: n, sampleIds, ...msg.requiredOnNewAttribute(target, n, sampleIds) });
      }
      if (next.unique && next.default !== undefined && n > 1) {
        const sampleIds = facts.recordSample(storedObject).slice(0, SAMPLE_IDS);
        out.conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target, rule: 'unique', count: n, sampleIds, ...msg.uniqueDefaultOnNewAttribute(target, n) });
      }
      continue;
    }
    consumed.add(storedName);
    if (current.system || current.protected) {
      const changes = attributeChanges(current, want);
      if (changes.length > 0 || current.system) {
        out.conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target, rule: 'protected', ...msg.protectedEntity(target) });
      }
      continue;
    }
    const adopt = current.owner.kind === 'runtime';
    if (adopt && current.type !== want.type) {
      out.conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target, rule: 'type_clash', ...msg.typeClash(target, current.type, want.type) });
      continue;
    }
    // a stored target renamed by this push is compared under its new name
    const storedTarget = relationTarget(current);
    const renamedTarget = storedTarget !== undefined ? input.renamed.get(storedTarget) : undefined;
    const seen = renamedTarget !== undefined ? ({ ...current, target: renamedTarget } as StoredAttribute) : current;
    const changes = attributeChanges(seen, want);
    if (changes.length === 0 && !adopt) continue;
    const from = storedSpec(current);
    const next = specOf(name, want as AttributeDecl);
    const typeChanged = from.type !== next.type;
    const step: Extract<Step, { action: 'change_attribute' }> = {
      action: 'change_attribute', target, object, attribute: name, from, to: next, changes,
      convert: typeChanged, destructive: false, label: 'change',
      ...(adopt ? { adopt: true, reason: 'adopts the runtime attribute' } : {}),
    };
    if (typeChanged && isWidening(from.type, next.type)) step.label = 'widening';

    if (changes.some((c) => DATA_FIELDS.has(c.field))) {
      // the probe reads stored data under stored names: a target that only follows a rename is no change
      const probe = renamedTarget !== undefined && renamedTarget === next.target ? { ...next, target: current.target as string } : next;
      const lost = { nulled: 0, altered: 0, sampleIds: [] as string[] };
      for (const found of facts.violations(storedObject, storedName, probe)) {
        if (found.count === 0) continue;
        const v = afterBackfill(found, next);
        if (v === undefined) {
          // the apply fills the empty values with the default in the same transaction
          step.backfill = found.count;
          step.affected = found.count;
          step.sampleIds = found.sampleIds.slice(0, SAMPLE_IDS);
          step.reason = msg.requiredBackfillReason(found.count);
          continue;
        }
        const sampleIds = v.sampleIds.slice(0, SAMPLE_IDS);
        if (v.rule === 'type' || v.rule === 'lossy') {
          // a lossy conversion is a loss the user may allow, not a conflict (contract §3)
          if (v.rule === 'type') lost.nulled += v.count;
          else lost.altered += v.count;
          for (const id of sampleIds) if (lost.sampleIds.length < SAMPLE_IDS && !lost.sampleIds.includes(id)) lost.sampleIds.push(id);
          continue;
        }
        if (v.rule === 'relation_target') {
          out.conflicts.push({
            code: 'SCHEMA_SYNC_CONFLICT', target, rule: 'relation_target', count: v.count, sampleIds,
            ...msg.relationTargetChange(target, String(seen.target), String(next.target), v.count, sampleIds),
          });
          continue;
        }
        out.conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target, rule: v.rule, count: v.count, sampleIds, ...msg.violationMessage(v.rule, target, v.count, sampleIds) });
      }
      if (lost.nulled + lost.altered > 0 && step.label !== 'widening') {
        step.destructive = true;
        step.label = 'destructive';
        step.affected = lost.nulled + lost.altered;
        step.sampleIds = lost.sampleIds;
        step.reason = msg.lossyConversionReason(from.type, next.type, lost.nulled, lost.altered, lost.sampleIds);
        // the values that become null are then filled with the default (the apply converts first)
        if (step.backfill !== undefined) step.reason += `; ${msg.requiredBackfillReason(step.backfill)}`;
      }
    }
    if (holdsDocuments(from) && !holdsDocuments(next)) {
      // the store deletes the attached documents with the type (engine/store/index.ts changeAttributeNow)
      const docs = facts.documentCount(storedObject, storedName);
      if (docs > 0) {
        step.destructive = true;
        step.label = 'destructive';
        step.affected = docs;
        step.reason = msg.documentTypeChangeReason(docs);
      }
    }
    out.changes.push(step);
  }

  for (const a of input.stored) {
    if (a.system || consumed.has(a.name) || declares(declared, a.name)) continue;
    if (!ownedBy(a, sourceId, input.previouslyDeclared)) continue; // runtime attributes stay
    const target = `${object}.${a.name}`;
    if (a.protected) {
      out.conflicts.push({ code: 'SCHEMA_SYNC_CONFLICT', target, rule: 'protected', ...msg.protectedEntity(target) });
      continue;
    }
    const n = facts.nonNullCount(storedObject, a.name);
    out.drops.push({
      action: 'drop_attribute', target, object, attribute: a.name,
      destructive: n > 0, label: n > 0 ? 'destructive' : 'change',
      reason: msg.dropAttributeReason(n), ...(n > 0 ? { affected: n } : {}),
    });
  }
  return out;
}
