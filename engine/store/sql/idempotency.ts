import { ServiceError } from '../../errors.js';
import type { Executor } from '../port.js';
import type { IdempotentAnswer } from '../types.js';

/** contract.md §3: a key replays its first answer for 24 hours; another body under it → 409. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Invariant (recall → write → remember, engine/server/idempotency.ts): the three run in one
 * write transaction. SQLite serialises write transactions, so a repeat sent meanwhile waits
 * and then recalls the answer. A backend with concurrent writers gets the same from
 * SERIALIZABLE (two transactions that both recall nothing and both remember the key
 * conflict on the row; the loser is retried whole and then recalls the winner's answer) or
 * must lock the (scope, key) row before the write (e.g. INSERT … ON CONFLICT DO NOTHING of
 * a placeholder first).
 */
export class Idempotency {
  private lastSweep = 0;

  async recall(ex: Executor, scope: string, key: string, bodyHash: string, at = Date.now()): Promise<IdempotentAnswer | undefined> {
    const row = await ex.get<{ body_hash: string; status: number; body: string }>(
      'SELECT body_hash, status, body FROM _ss_idempotency WHERE scope = ? AND key = ? AND expires_at > ?',
      [scope, key, at],
    );
    if (!row) return undefined;
    if (row.body_hash !== bodyHash) {
      throw new ServiceError('SCHEMA_CONFLICT', 'This idempotency-key was used with another request body', {
        fix: 'use a new idempotency-key for a different request',
      });
    }
    return { status: row.status, body: row.body };
  }

  async remember(tx: Executor, scope: string, key: string, bodyHash: string, answer: IdempotentAnswer, at = Date.now()): Promise<void> {
    // Expired rows go at most once a minute, so the sweep costs nothing per request.
    if (at - this.lastSweep > 60_000) {
      this.lastSweep = at;
      await tx.run('DELETE FROM _ss_idempotency WHERE expires_at <= ?', [at]);
    }
    await tx.run(
      'INSERT INTO _ss_idempotency (scope, key, body_hash, status, body, expires_at) VALUES (?, ?, ?, ?, ?, ?) ' +
        'ON CONFLICT(scope, key) DO UPDATE SET body_hash = excluded.body_hash, status = excluded.status, body = excluded.body, expires_at = excluded.expires_at',
      [scope, key, bodyHash, answer.status, answer.body, at + IDEMPOTENCY_TTL_MS],
    );
  }
}
