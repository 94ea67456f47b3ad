import { ServiceError } from '../../errors.js';
import type { Executor } from '../port.js';
import type { PreparedCreates } from './records.js';

/**
 * Writes on a store bound to a transaction (`Store.transaction(fn)`'s `tx`, types.ts): each is
 * all or nothing on its own too, by a savepoint; or, in a body that lets every failure end the
 * transaction (`{ savepoints: false }`, types.ts StoreTransactionOptions), by the
 * transaction's own rollback.
 */

/**
 * A write inside a larger transaction: a failed bulk create the caller catches leaves none of
 * its rows behind while the transaction goes on (SAVEPOINT, the same in SQLite and PostgreSQL).
 */
export async function savepoint<T>(tx: Executor, fn: () => Promise<T>): Promise<T> {
  // One name for every write: the writes of a transaction run one after another, so their
  // savepoints nest, and RELEASE / ROLLBACK TO a name mean the innermost one of that name (both
  // backends). A name per write made four new statement texts per write, which filled the
  // driver's statement cache and pushed the record statements out of it.
  await tx.run('SAVEPOINT ss_write');
  try {
    const out = await fn();
    await tx.run('RELEASE SAVEPOINT ss_write');
    return out;
  } catch (err) {
    await tx.run('ROLLBACK TO SAVEPOINT ss_write');
    await tx.run('RELEASE SAVEPOINT ss_write');
    throw err;
  }
}

/** A `transaction(fn, { savepoints: false })` body: the first of its writes that failed. */
export interface WholeBody {
  failed?: { error: unknown };
}

/** A write of such a body, without a savepoint: a failure is noted before it goes to the body. */
export async function inWholeBody<T>(whole: WholeBody, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    whole.failed ??= { error };
    throw error;
  }
}

/**
 * The body returned: if it had caught a failed write and gone on, what that write did before
 * failing is still in the transaction, so it must not commit. A misuse of the option, hence an
 * internal error (a 500), the write's failure as its cause.
 */
export function endWholeBody<T>(whole: WholeBody, out: T): T {
  if (whole.failed) throw new Error('a write inside transaction(fn, { savepoints: false }) failed and its body went on: rolled back', { cause: whole.failed.error });
  return out;
}

/** What the writes inside a `transaction` did that its end must act on (store.ts). */
export interface TransactionMarks {
  /** A write that may change what a key is ran: the keys version is read again after the commit. */
  keys: boolean;
}

/**
 * A create refused by a unique index inside a `{ savepoints: false }` body: the 400 it is
 * (a body that catches it reads SCHEMA_VALIDATION_FAILED), whose offenders are named
 * (records.ts nameUniqueOffenders) only once the transaction has rolled back, by the
 * top-level `transaction` — inside it, PostgreSQL refuses every statement after the failed
 * one. `transaction` answers the named 400 in its place.
 */
export class UniqueToName extends ServiceError {
  constructor(
    readonly prepared: PreparedCreates,
    override readonly cause: unknown,
  ) {
    super('SCHEMA_VALIDATION_FAILED', 'A unique value is already taken');
  }
}
