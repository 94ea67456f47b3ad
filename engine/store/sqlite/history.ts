import { ServiceError } from '../../errors.js';
import type { SourceHistoryEntry } from '../../model/stored.js';
import type { Plan } from '../../plan/types.js';
import type { Db } from './database.js';

/**
 * Push history of a source (contract.md §3 `GET /schema/sources/:id/history`): one row per
 * push that changed the source, written by the push itself inside its write transaction
 * (engine/store/push.ts), so a rolled-back push leaves no row and a row never names a
 * version that did not land. (source, version) is the key: two pushes cannot both write
 * version n because each plans, checks and applies under the one write lock.
 */
const HISTORY_SQL = `
CREATE TABLE IF NOT EXISTS _ss_source_history (
  source_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  applied_at TEXT NOT NULL,
  plan_hash TEXT NOT NULL,
  key_id TEXT,
  key_name TEXT,
  creates INTEGER NOT NULL,
  changes INTEGER NOT NULL,
  drops INTEGER NOT NULL,
  destructive TEXT NOT NULL,
  PRIMARY KEY (source_id, version)
) STRICT;
`;

export interface PushAuthor {
  id: string;
  name: string;
}

export type HistoryEntry = SourceHistoryEntry;

export interface HistoryPage {
  entries: HistoryEntry[];
  nextCursor: string | null;
}

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

export class SourceHistory {
  constructor(private readonly db: Db) {
    db.exec(HISTORY_SQL);
  }

  /** Inside the push's transaction (the caller's), after the apply wrote the source's row: its version and time are the push's. */
  record(sourceId: string, plan: Plan, by: PushAuthor | undefined): void {
    this.db
      .prepare(
        'INSERT INTO _ss_source_history (source_id, version, applied_at, plan_hash, key_id, key_name, creates, changes, drops, destructive) ' +
          'SELECT id, version, applied_at, ?, ?, ?, ?, ?, ?, ? FROM _ss_sources WHERE id = ?',
      )
      .run(
        plan.planHash, by?.id ?? null, by?.name ?? null, plan.summary.create, plan.summary.change, plan.summary.drop,
        JSON.stringify(plan.steps.filter((s) => s.destructive).map((s) => s.target)), sourceId,
      );
  }

  /** Newest first; the cursor is the last version of the page (keyset: stable while pushes land). */
  list(sourceId: string, options: { limit?: number; cursor?: string } = {}): HistoryPage {
    const limit = options.limit ?? 50;
    let before = Number.MAX_SAFE_INTEGER;
    if (options.cursor !== undefined) {
      if (!/^[1-9][0-9]{0,15}$/.test(options.cursor)) {
        throw new ServiceError('SCHEMA_VALIDATION_FAILED', 'Invalid cursor', { errors: [{ path: ['querystring', 'cursor'], message: 'is not a cursor from a previous page' }] });
      }
      before = Number(options.cursor);
    }
    const rows = this.db
      .prepare('SELECT * FROM _ss_source_history WHERE source_id = ? AND version < ? ORDER BY version DESC LIMIT ?')
      .all(sourceId, before, limit + 1) as Row[];
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
}
