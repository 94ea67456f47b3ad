import { ServiceError } from '../../errors.js';
import type { Db } from './database.js';
import type { IdempotentAnswer } from '../types.js';

/** contract.md §3: a key replays its first answer for 24 hours; another body under it → 409. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export class Idempotency {
  private lastSweep = 0;
  constructor(private readonly db: Db) {}

  recall(scope: string, key: string, bodyHash: string, at = Date.now()): IdempotentAnswer | undefined {
    const row = this.db
      .prepare('SELECT body_hash, status, body FROM _ss_idempotency WHERE scope = ? AND key = ? AND expires_at > ?')
      .get(scope, key, at) as { body_hash: string; status: number; body: string } | undefined;
    if (!row) return undefined;
    if (row.body_hash !== bodyHash) {
      throw new ServiceError('SCHEMA_CONFLICT', 'This idempotency-key was used with another request body', {
        fix: 'use a new idempotency-key for a different request',
      });
    }
    return { status: row.status, body: JSON.parse(row.body) as unknown };
  }

  remember(scope: string, key: string, bodyHash: string, answer: IdempotentAnswer, at = Date.now()): void {
    // Expired rows go at most once a minute, so the sweep costs nothing per request.
    if (at - this.lastSweep > 60_000) {
      this.lastSweep = at;
      this.db.prepare('DELETE FROM _ss_idempotency WHERE expires_at <= ?').run(at);
    }
    this.db
      .prepare(
        'INSERT INTO _ss_idempotency (scope, key, body_hash, status, body, expires_at) VALUES (?, ?, ?, ?, ?, ?) ' +
          'ON CONFLICT(scope, key) DO UPDATE SET body_hash = excluded.body_hash, status = excluded.status, body = excluded.body, expires_at = excluded.expires_at',
      )
      .run(scope, key, bodyHash, answer.status, JSON.stringify(answer.body), at + IDEMPOTENCY_TTL_MS);
  }
}
