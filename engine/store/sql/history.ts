import { ServiceError } from '../../errors.js';
import { DEFAULT_PAGE } from '../../model/limits.js';
import type { SourceHistoryEntry } from '../../model/stored.js';
import type { HistoryPage, PushAuthor } from '../types.js';
import type { Plan } from '../../plan/types.js';
import type { Executor } from '../port.js';

/**
 * Push history of a source (contract.md §3 `GET /schema/sources/:id/history`): one row per
 * push that changed the source, written by the push itself inside its write transaction
 * (engine/store/push.ts), so a rolled-back push leaves no row and a row never names a
 * version that did not land. (source, version) is the key: two pushes cannot both write
 * version n because each plans, checks and applies under the one write lock.
 */
interface Row {
  version: number;
  applied_at: string;
  plan_hash: string;
  key_id: string | null;
  key_name: string | null;
  creates: number;
  changes: number;
  drops: number;
  destructive: string;
}

/** Inside the push's transaction (the caller's), after the apply wrote the source's row: its version and time are the push's. */
export async function recordHistory(tx: Executor, sourceId: string, plan: Plan, by: PushAuthor | undefined): Promise<void> {
  await tx.run(
    'INSERT INTO _ss_source_history (source_id, version, applied_at, plan_hash, key_id, key_name, creates, changes, drops, destructive) ' +
      'SELECT id, version, applied_at, ?, ?, ?, ?, ?, ?, ? FROM _ss_sources WHERE id = ?',
    [
      plan.planHash, by?.id ?? null, by?.name ?? null, plan.summary.create, plan.summary.change, plan.summary.drop,
      JSON.stringify(plan.steps.filter((s) => s.destructive).map((s) => s.target)), sourceId,
    ],
  );
}

/** Newest first; the cursor is the last version of the page (keyset: stable while pushes land). */
export async function listHistory(ex: Executor, sourceId: string, options: { limit?: number; cursor?: string } = {}): Promise<HistoryPage> {
  const limit = options.limit ?? DEFAULT_PAGE;
  let before = Number.MAX_SAFE_INTEGER;
  if (options.cursor !== undefined) {
    if (!/^[1-9][0-9]{0,15}$/.test(options.cursor)) {
      throw new ServiceError('SCHEMA_VALIDATION_FAILED', 'Invalid cursor', { errors: [{ path: ['querystring', 'cursor'], message: 'is not a cursor from a previous page' }] });
    }
    before = Number(options.cursor);
  }
  const rows = await ex.all<Row>('SELECT * FROM _ss_source_history WHERE source_id = ? AND version < ? ORDER BY version DESC LIMIT ?', [sourceId, before, limit + 1]);
  const page = rows.slice(0, limit);
  return {
    entries: page.map((r) => ({
      version: r.version,
      appliedAt: r.applied_at,
      planHash: r.plan_hash,
      key: r.key_id === null ? null : { id: r.key_id, name: r.key_name ?? '' },
      steps: { create: r.creates, change: r.changes, drop: r.drops },
      destructive: JSON.parse(r.destructive) as string[],
    })),
    nextCursor: rows.length > limit ? String(page[page.length - 1]!.version) : null,
  };
}
