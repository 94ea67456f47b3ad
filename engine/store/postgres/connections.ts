/**
 * How many PostgreSQL connections one process opens (`serve --database-connections`, env
 * SCHEMASYNC_DATABASE_CONNECTIONS): the one rule the CLI checks and the store applies.
 *
 * A process keeps two pools (driver.ts): the main one (transactions, reads, the rate counter)
 * and one whose connections default to SERIALIZABLE for lone single-statement writes
 * (`PostgresDriver.serializable`, the single-record create's fast path). The number a user
 * gives bounds both together, so `processes × connections` is what a database's
 * `max_connections` (or a pooler's pool) must hold. The main pool gets the larger half: every
 * request needs it, while a lone create that finds the serial pool busy waits for it.
 */
export const DEFAULT_CONNECTIONS = 20;
/** One connection for each pool. */
export const MIN_CONNECTIONS = 2;
/** Far above any database's max_connections default; a typo such as 20000 is refused. */
export const MAX_CONNECTIONS = 1000;

/** Whether `n` may be given as the connections of one process. */
export const isConnectionCount = (n: number): boolean => Number.isSafeInteger(n) && n >= MIN_CONNECTIONS && n <= MAX_CONNECTIONS;

/** The pools' sizes for at most `connections` connections in all. */
export function poolSizes(connections = DEFAULT_CONNECTIONS): { max: number; serialMax: number } {
  if (!isConnectionCount(connections)) {
    throw new RangeError(`connections must be a whole number from ${MIN_CONNECTIONS} to ${MAX_CONNECTIONS}, got ${connections}`);
  }
  const serialMax = Math.floor(connections / 2);
  return { max: connections - serialMax, serialMax };
}
