import { allowDestructiveFlag, allowLossHint } from './approval.js';
import type { ViolationRule } from './facts.js';

/**
 * The sentences and fixes of plan conflicts and steps (issue 4: "every refusal and
 * conflict names the target, the count, up to five sample record ids, and the fix").
 * Kept in one place so the CLI, the server log and the tests read the same words.
 */

function records(count: number): string {
  return count === 1 ? '1 record' : `${count} records`;
}

function samples(ids: readonly string[]): string {
  return ids.length > 0 ? ` (e.g. ${ids.join(', ')})` : '';
}

/** `v(one, 'has', 'have')`: the verb agrees with the count ("1 record has", "2 records have"). */
const v = (one: boolean, singular: string, plural: string): string => (one ? singular : plural);

const RULE_TEXT: Record<ViolationRule, (target: string, one: boolean) => { what: string; fix: string }> = {
  type: (t, one) => ({
    what: `${v(one, 'holds a value', 'hold values')} the new type of ${t} cannot convert`,
    fix: `convert or clear those values first, or allow the loss with ${allowDestructiveFlag([t])}`,
  }),
  required: (t, one) => ({
    what: `${v(one, 'has', 'have')} no value for ${t}, which is now required`,
    fix: `fill ${t} on those records, or give ${t} a default`,
  }),
  unique: (t, one) => ({
    what: `${v(one, 'shares its', 'share their')} value of ${t} with another record, and ${t} is now unique`,
    fix: `make the values of ${t} distinct first, or drop unique`,
  }),
  options: (t, one) => ({
    what: `${v(one, 'holds', 'hold')} a value of ${t} that is no longer among its options`,
    fix: `keep those options, or change the records to a remaining option first`,
  }),
  length: (t, one) => ({
    what: `${v(one, 'holds', 'hold')} a value of ${t} outside the new minLength/maxLength`,
    fix: `shorten those values first, or relax the length limit of ${t}`,
  }),
  range: (t, one) => ({
    what: `${v(one, 'holds', 'hold')} a value of ${t} outside the new min/max`,
    fix: `change those values first, or relax min/max of ${t}`,
  }),
  pattern: (t, one) => ({
    what: `${v(one, 'holds', 'hold')} a value of ${t} that does not match the new pattern`,
    fix: `fix those values first, or relax the pattern of ${t}`,
  }),
  lossy: (t, one) => ({
    what: `${v(one, 'holds a value', 'hold values')} the new type of ${t} would alter (converting back does not give the original)`,
    fix: `keep the type of ${t}, or allow the loss with ${allowDestructiveFlag([t])}`,
  }),
  relation_target: (t, one) => ({
    what: `${v(one, 'links', 'link')} ${t} to records of its current target object, which the new target would not hold`,
    fix: `clear ${t} on those records first, or add a new relation attribute for the new target`,
  }),
  multiple: (t, one) => ({
    what: `${v(one, 'holds', 'hold')} several values in ${t}, which now takes one`,
    fix: `keep one value per record first, or keep multiple: true on ${t}`,
  }),
};

export function violationMessage(
  rule: ViolationRule,
  target: string,
  count: number,
  sampleIds: readonly string[],
): { message: string; fix: string } {
  const text = RULE_TEXT[rule](target, count === 1);
  return { message: `${records(count)}${samples(sampleIds)} ${text.what}.`, fix: text.fix };
}

export function requiredOnNewAttribute(target: string, count: number, sampleIds: readonly string[] = []): { message: string; fix: string } {
  return {
    message: `${target} is new and required, but ${records(count)}${samples(sampleIds)} already exist without a value for it.`,
    fix: `give ${target} a default, or make it optional, fill it, then make it required`,
  };
}

export function uniqueDefaultOnNewAttribute(target: string, count: number): { message: string; fix: string } {
  return {
    message: `${target} is new, unique and has a default, so the ${records(count)} already stored would share one value.`,
    fix: `drop the default or unique of ${target}, add it optional, fill distinct values, then make it unique`,
  };
}

export function ownedElsewhere(kind: 'object' | 'view' | 'role', target: string, owner: string): { message: string; fix: string } {
  return {
    message: `The ${kind} ${target} already exists and is owned by ${owner}.`,
    fix: `rename the ${kind} in your declaration, or remove it from ${owner} first`,
  };
}

/** A view outside this declaration reads what the push drops (issue 16: never left broken). */
export function viewUses(view: string, owner: string, target: string): { message: string; fix: string } {
  return {
    message: `The view ${view} (${owner}) reads ${target}, which this push drops; the view would be left broken.`,
    fix: `change or delete the view first (schemasync views put|delete ${view}), or declare it in this source`,
  };
}

/** Dropping a role that active keys hold would strand them (contract.md §2: the fix names the keys). */
export function roleHeldByKeys(role: string, keys: readonly { id: string; name: string }[]): { message: string; fix: string } {
  const list = keys.slice(0, 5).map((k) => `${k.id} "${k.name}"`).join(', ') + (keys.length > 5 ? `, and ${keys.length - 5} more` : '');
  return {
    message: `The role ${role} is no longer declared, but ${keys.length} active key${keys.length === 1 ? '' : 's'} hold${keys.length === 1 ? 's' : ''} it: ${list}.`,
    fix: `revoke ${keys.length === 1 ? 'that key' : 'those keys'} (schemasync keys revoke <id>) or move ${keys.length === 1 ? 'its holder' : 'their holders'} to another role first, or keep declaring ${role} (renamedFrom keeps its keys under a new name)`,
  };
}

/** A role outside this declaration grants on what the push drops (a later object of that name would inherit it). */
export function roleUses(role: string, owner: string, object: string): { message: string; fix: string } {
  return {
    message: `The role ${role} (${owner}) grants access to ${object}, which this push drops.`,
    fix: `remove ${object} from the role first (schemasync roles update ${role}), or declare the role in this source`,
  };
}

export function protectedEntity(target: string): { message: string; fix: string } {
  return {
    message: `${target} is system-protected and cannot be changed or dropped by a sync.`,
    fix: `remove ${target} from your declaration (or restore it as stored)`,
  };
}

export function typeClash(target: string, storedType: string, declaredType: string): { message: string; fix: string } {
  return {
    message: `${target} exists as a runtime ${storedType} attribute, but the declaration makes it ${declaredType}.`,
    fix: `rename the declared attribute, or convert the runtime attribute to ${declaredType} (or declare it as ${storedType})`,
  };
}

export function renameClash(kind: 'object' | 'attribute' | 'role', target: string, from: string): { message: string; fix: string } {
  return {
    message: `The ${kind} ${from} cannot be renamed to ${target}: both exist, so the rename cannot keep the data of ${from}.`,
    fix: `drop or rename the existing ${target} first, or remove renamedFrom from ${target} (and declare ${from} to keep it)`,
  };
}

export function relationTargetChange(target: string, from: string, to: string, count: number, sampleIds: readonly string[] = []): { message: string; fix: string } {
  return {
    message: `${target} links ${records(count)}${samples(sampleIds)} to ${from}; changing its target to ${to} would leave them pointing at the wrong object.`,
    fix: `clear ${target} on those records first, or add a new relation attribute for ${to}`,
  };
}

export function missingRelationTarget(target: string, object: string): { message: string; fix: string } {
  return {
    message: `${target} is a relation to the object ${object}, which is neither declared nor stored on the instance.`,
    fix: `declare ${object} in your declaration, or create it on the instance first (or fix the target of ${target})`,
  };
}

export function requiredBackfillReason(count: number): string {
  return `now required; fills ${count} empty value${count === 1 ? '' : 's'} with the default`;
}

export function defaultFillReason(count: number): string {
  return `fills ${records(count)} with the default`;
}

export function documentTypeChangeReason(count: number): string {
  return `stops being a document attribute; deletes ${count} attached document${count === 1 ? '' : 's'} and their file links`;
}

export function referenced(object: string, by: readonly string[]): { message: string; fix: string } {
  return {
    message: `The object ${object} is dropped, but ${by.join(', ')} still ${by.length === 1 ? 'targets' : 'target'} it.`,
    fix: `drop or retarget ${by.join(', ')} in the same declaration, or keep ${object}`,
  };
}

export function dropObjectReason(object: string, count: number): string {
  return count > 0 ? `no longer declared; deletes ${records(count)}` : 'no longer declared';
}

export function dropAttributeReason(count: number): string {
  return count > 0 ? `no longer declared; deletes ${count} non-null value${count === 1 ? '' : 's'}` : 'no longer declared';
}

/** `nulled`: values that cannot convert (become null); `altered`: values converted but changed. */
export function lossyConversionReason(from: string, to: string, nulled: number, altered = 0, sampleIds: readonly string[] = []): string {
  const parts: string[] = [];
  if (nulled > 0) parts.push(`cannot convert ${nulled} stored value${nulled === 1 ? '' : 's'} (they become null)`);
  if (altered > 0) parts.push(`alters ${altered} stored value${altered === 1 ? '' : 's'} (converting back does not give the original)`);
  return `${from} → ${to} ${parts.join(' and ')}${samples(sampleIds)}`;
}

/**
 * `uncovered`: the losses allowDestructive does not cover (named in the message);
 * `all`: every destructive target of the plan. The fix lists all of them, because an
 * allow list replaces the previous one: naming only the uncovered ones would refuse the rest.
 */
export function destructiveRefusal(uncovered: readonly string[], all: readonly string[] = uncovered): { message: string; fix: string } {
  return {
    message: `The push would lose data in ${uncovered.join(', ')} and allowDestructive does not cover ${uncovered.length === 1 ? 'it' : 'them'}.`,
    fix: allowLossHint(all),
  };
}

export function staleVersion(ifMatch: number, current: number): { message: string; fix: string } {
  return {
    message: `The source changed since the plan was made (planned against version ${ifMatch}, now ${current}).`,
    fix: 'plan again and review the new plan before syncing',
  };
}
