import type { Backend, Param } from '../port.js';
import type { PostgresDriver } from './driver.js';
import { CATALOG_TOKEN_SQL } from './setup.js';

/**
 * Backend.insertIfCatalog on PostgreSQL: a single-record create as ONE statement (issue 15
 * "Performance"; engine/store/sql/lone-create.ts decides which creates come here):
 *
 *   INSERT INTO "r_x" (cols) SELECT $1, …, $n
 *   WHERE (SELECT value FROM _ss_meta WHERE key = 'catalog_version') = $n+1
 *     AND current_setting('transaction_isolation') = 'serializable'
 *
 * autocommitted as a SERIALIZABLE transaction of its own (driver.ts `serializable`). The
 * parameters take the types of the columns they go into (an INSERT … SELECT resolves them
 * against its target), so no cast names a type here.
 *
 * Why a push through any process and this statement never leave a row checked against a
 * schema that was not in force when it committed. A push (any schema write) is one
 * SERIALIZABLE transaction that bumps the token row, and reads the record table wherever
 * the change depends on its rows (the data checks of a narrowed constraint, the backfill of
 * a default, a type conversion). Three orders are possible:
 * 1. The push committed before this statement's snapshot: the token moved, the WHERE is
 *    false, nothing is inserted; the caller falls back to a transaction, which reads the new
 *    schema. (With DDL on the table, the statement may also wait for the push's ACCESS
 *    EXCLUSIVE lock and then fail on a changed column: the caller falls back too.)
 * 2. This statement committed before the push's snapshot: the push sees the row like any
 *    other and refuses or converts it (SCHEMA_SYNC_CONFLICT, a conversion, a backfill).
 * 3. They overlap: this statement read the token row the push writes, without seeing the
 *    push (a read-write dependency from it to the push), and the push read the record table
 *    without seeing this row (one from the push to it). That cycle is exactly what
 *    PostgreSQL's serializable snapshot isolation refuses: one of the two fails with a
 *    serialization failure — the push is run again by the driver, this statement falls back
 *    to a transaction. It would not under READ COMMITTED: a row inserted after the push's
 *    snapshot but before its commit, checked against the old maxLength or `required`, would
 *    stay (test/api/lone-create.test.ts makes that race).
 * In SERIALIZABLE the snapshot is taken when the statement is parsed, before it locks the
 * table, so a lock wait alone (case 1's DDL) is not what makes it exact: the token row and
 * SSI are. `current_setting` makes the statement insert nothing should the connection not be
 * serializable after all (the pool sets it when a connection opens).
 *
 * Concurrent creates through any process: each reads only the token row, which none of them
 * writes, so they never conflict with each other; unique values are the unique indexes'
 * (a violation fails the statement; the caller then takes the transaction path, which
 * refuses and names the value exactly as it always does: the same 400 envelope).
 */
export function loneInsert(driver: PostgresDriver): NonNullable<Backend['insertIfCatalog']> {
  return async (table, columns, row, token) => {
    // The token as catalogToken reads it; a database without the row (never set up) has none.
    if (typeof token !== 'string') return false;
    const values = columns.map(() => '?').join(', ');
    const sql = `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${values} WHERE (${CATALOG_TOKEN_SQL}) = ? AND current_setting('transaction_isolation') = 'serializable'`;
    const params: Param[] = [...row, token];
    return (await driver.serializable(sql, params)).changes === 1;
  };
}
