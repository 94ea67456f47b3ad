import { ServiceError } from '../errors.js';
import * as msg from './messages.js';
import { approvalTargets } from './approval.js';
import { uncoveredDestructive } from './policy.js';
import type { AllowDestructive, Conflict, ConflictCode, Plan } from './types.js';

export interface RefusalOptions {
  allowDestructive?: AllowDestructive;
  ifMatch?: number;
  currentVersion: number;
}

/**
 * The first problem that refuses a push, in the order of contract.md §3: names (400),
 * ownership, data/type conflicts, references, uncovered losses (500, masked: the
 * details ride in `data` for the log and are learnt by clients from a dry run), a stale
 * if-match. undefined: the push may apply.
 */
const ORDER: readonly (readonly ConflictCode[])[] = [
  ['SCHEMA_INVALID_OBJECT_NAME', 'SCHEMA_RESERVED_OBJECT_NAME', 'SCHEMA_INVALID_ATTRIBUTE_NAME'],
  ['SCHEMA_DUPLICATE_OBJECT', 'SCHEMA_DUPLICATE'],
  ['SCHEMA_SYNC_CONFLICT'],
  ['SCHEMA_OBJECT_REFERENCED'],
];

export function refusal(plan: Plan, options: RefusalOptions): ServiceError | undefined {
  for (const codes of ORDER) {
    const hit = plan.conflicts.filter((c) => codes.includes(c.code));
    const first = hit[0];
    if (first) return conflictError(first, hit);
  }
  const losses = uncoveredDestructive(plan, options.allowDestructive);
  if (losses.length > 0) {
    const all = approvalTargets(plan);
    const m = msg.destructiveRefusal(losses.map((s) => s.target), all);
    return new ServiceError('SCHEMA_DESTRUCTIVE_NOT_ALLOWED', m.message, {
      fix: m.fix,
      data: {
        steps: losses.map((s) => ({
          action: s.action, target: s.target, affected: s.affected ?? 0, reason: s.reason, ...(s.sampleIds ? { sampleIds: s.sampleIds } : {}),
        })),
        allTargets: all,
      },
    });
  }
  if (options.ifMatch !== undefined && options.ifMatch !== options.currentVersion) {
    const m = staleMessage(options.ifMatch, options.currentVersion);
    return new ServiceError('SCHEMA_CONFLICT', m.message, { fix: m.fix, data: { ifMatch: options.ifMatch, version: options.currentVersion } });
  }
  return undefined;
}

function staleMessage(ifMatch: number, current: number) {
  return msg.staleVersion(ifMatch, current);
}

function conflictError(first: Conflict, all: Conflict[]): ServiceError {
  const message = all.length > 1 ? `${first.message} (and ${all.length - 1} more)` : first.message;
  return new ServiceError(first.code, message, {
    errors: all.map((c) => ({ path: [c.target], message: c.fix ? `${c.message} Fix: ${c.fix}.` : c.message })),
    ...(first.fix !== undefined ? { fix: first.fix } : {}),
    data: { conflicts: all },
  });
}
