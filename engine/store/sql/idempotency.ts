import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { ServiceError } from '../../errors.js';
import { objectScopeTail } from '../../model/idempotency-scope.js';
import type { Executor } from '../port.js';
import type { IdempotentAnswer } from '../types.js';

/** contract.md §3: a key replays its first answer for 24 hours; another body under it → 409. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How an answer is kept. A bulk answer is large (a 1,000-record bulk-create answers ~250 KB)
 * and very repetitive: kept as is, a 100,000-row import wrote ~25 MB more into the database
 * (and through the WAL) than its records, ~90 ms of CPU in the COMMITs; deflated at level 1
 * (~0.3 ms per 250 KB) it keeps ~15 KB. Base64 text, so the column stays TEXT on every
 * backend and no migration is needed. An answer kept as is, by an earlier version or because
 * it is small (deflate would cost more than it saves), is JSON text beginning with `{`, which
 * the marker is not: recall tells the two apart. Inflating gives back the very bytes deflated,
 * and the answer text is well-formed UTF-16 (JSON.stringify escapes lone surrogates), so the
 * UTF-8 round trip is exact: a replay is byte for byte the first answer (contract.md §3).
 */
const PACKED = 'deflate:';
const PACK_ABOVE = 2048;

function pack(body: string): string {
  return body.length > PACK_ABOVE ? PACKED + deflateRawSync(body, { level: 1 }).toString('base64') : body;
}

function unpack(stored: string): string {
  return stored.startsWith(PACKED) ? inflateRawSync(Buffer.from(stored.slice(PACKED.length), 'base64')).toString('utf8') : stored;
}

/** The status of a claim (a row of the claiming transaction, never committed as such: remember replaces it). */
const CLAIMED = 0;

/**
 * Invariant (recall → write → remember, engine/server/idempotency.ts): the three run in one
 * write transaction, and `recall` in a transaction claims the (scope, key) row first (a
 * placeholder, INSERT … ON CONFLICT DO NOTHING), before any of the write's statements.
 * SQLite serialises write transactions, so a repeat sent meanwhile waits and then recalls
 * the answer. On PostgreSQL a repeat's claim waits on the first transaction's row and then,
 * under SERIALIZABLE, fails as a serialization conflict, so it is retried whole and recalls
 * the winner's answer. Without the claim the repeat ran the write itself, and a record with a
 * unique value failed on the winner's row as a unique violation (400), not as a conflict to
 * retry: a retry racing its first try was told its rows were invalid when they had landed.
 * A transaction that fails takes its claim with it.
 */
export class Idempotency {
  private lastSweep = 0;

  async recall(ex: Executor, scope: string, key: string, bodyHash: string, claim: boolean, at = Date.now()): Promise<IdempotentAnswer | undefined> {
    if (claim) {
      await ex.run('INSERT INTO _ss_idempotency (scope, key, body_hash, status, body, expires_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(scope, key) DO NOTHING', [
        scope,
        key,
        bodyHash,
        CLAIMED,
        '',
        at + IDEMPOTENCY_TTL_MS,
      ]);
    }
    const row = await ex.get<{ body_hash: string; status: number; body: string }>(
      'SELECT body_hash, status, body FROM _ss_idempotency WHERE scope = ? AND key = ? AND expires_at > ?',
      [scope, key, at],
    );
    if (!row || Number(row.status) === CLAIMED) return undefined;
    if (row.body_hash !== bodyHash) {
      throw new ServiceError('SCHEMA_CONFLICT', 'This idempotency-key was used with another request body', {
        fix: 'use a new idempotency-key for a different request',
      });
    }
    return { status: row.status, body: unpack(row.body) };
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
      [scope, key, bodyHash, answer.status, pack(answer.body), at + IDEMPOTENCY_TTL_MS],
    );
  }
}

/** The answers remembered for `object`'s record routes go (an object dropped or renamed, in that transaction: model/idempotency-scope.ts). */
export async function forgetObjectAnswers(tx: Executor, object: string): Promise<void> {
  const tail = objectScopeTail(object);
  await tx.run('DELETE FROM _ss_idempotency WHERE substr(scope, length(scope) - ? + 1) = ?', [tail.length, tail]);
}
