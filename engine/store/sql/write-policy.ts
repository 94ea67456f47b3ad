import type { TransactionOptions } from '../port.js';
import type { Catalog } from './catalog.js';
import { tableIdent } from './idents.js';

/**
 * Which writes may share a COMMIT with others (group commit). Only the single-record writes
 * (create, update, delete): they change no schema, so their catalog view is never retired
 * or published (catalog.ts) and members of one group read the same
 * committed schema; what they leave in process memory after the transaction (the files
 * module's release candidates) is re-checked against the committed rows when flushed.
 * Not grouped:
 * - bulk record writes: their fixed cost is already shared by up to 1,000 records, and a
 *   savepoint over thousands of rows costs SQLite a sub-journal of every page they touch
 *   (bulkCreate of 10,000 took twice as long inside one);
 * - schema writes (objects, attributes, views, roles, a source push, applyPlan): they drop
 *   the process's object cache before COMMIT and publish their view after it. In a group a
 *   later member would load the cache from the still-uncommitted schema, and a failed
 *   group COMMIT would leave that cache describing a schema that never landed;
 * - `transaction(fn)`: its body may do any of the above;
 * - keys and idempotency writes: rare (a key created or revoked, lastUsedAt once a minute),
 *   so grouping would save nothing, and the last-owner rule (keys.ts) is simplest alone.
 */
export const RECORD_WRITE = { group: true } as const;

/**
 * Schema writes (a push, the schema routes' object and attribute changes) run one at a time
 * (TransactionOptions.oneAtATime on `_ss_objects`, which only schema writes write; record
 * writes read it and go on). Without it, concurrent pushes on PostgreSQL could deadlock over
 * and over: each retried try holds SHARE on the record tables (below) and then needs ACCESS
 * EXCLUSIVE on one for its DDL, which another retried push's SHARE blocks; PostgreSQL breaks
 * each cycle after deadlock_timeout (1 s), the victim's retry takes SHARE again, and three CI
 * jobs pushing one reviewed plan went on so for over 30 s (test/api/sources-review.test.ts).
 * Queued at the start instead, the second push begins after the first commits, sees it, and
 * answers at once (a reviewed plan that already applied: 409). A retried try
 * waits for the record writes of every object the process knows (TransactionOptions.waitFor):
 * on PostgreSQL a push reads record tables (its data checks, backfills, conversions) and
 * bumps the catalog token, which every create reads, so under a steady stream of creates
 * each optimistic try met a create that had read the old token and written the table it
 * checked, and failed serialization — twelve times, then 500 (issue 15: pushes while creates
 * run). Only the retries wait: a push on a quiet database locks nothing more than before.
 * The list is advisory (the process's cache, maybe stale): the retry is exact either way.
 * The locks are taken in one statement, in catalog order; a write holding one of those
 * tables and waiting for another the push has locked (a cascade delete across objects) is a
 * deadlock PostgreSQL detects, and deadlock_detected is retried like a serialization failure
 * (postgres/driver.ts).
 */
export function schemaWrite(catalog: Catalog): TransactionOptions {
  return { waitFor: () => catalog.knownNames().map((name) => tableIdent(name)), oneAtATime: '_ss_objects' };
}
