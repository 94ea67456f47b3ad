import type { Backend } from '../port.js';
import { CODECS } from './codecs.js';
import { postgresDdl } from './ddl.js';
import { postgresDialect } from './dialect.js';
import { PostgresDriver, type PostgresDriverOptions } from './driver.js';
import { postgresFulltext } from './fulltext.js';
import { loneInsert } from './lone-insert.js';
import { PostgresRateCounter } from './rate-counter.js';
import { CATALOG_TOKEN_SQL, catalogToken, setupDatabase } from './setup.js';

/**
 * The scale-out backend (issue 15, contract.md §8): PostgreSQL through a node-postgres
 * pool. Opening makes the pool only; the first query connects, and the store's setup
 * transaction creates or brings forward the `_ss_` tables (setup.ts).
 */
export function openPostgresBackend(options: PostgresDriverOptions): Backend {
  // Every store call starts by reading the catalog token (sql/catalog.ts refresh): it rides
  // on BEGIN's round trip instead of costing one of its own.
  const driver = new PostgresDriver({ ...options, opening: CATALOG_TOKEN_SQL });
  return {
    name: 'postgres',
    driver,
    dialect: postgresDialect,
    codecs: CODECS,
    ddl: postgresDdl,
    fulltext: postgresFulltext,
    setup: async (tx) => void (await setupDatabase(tx)),
    catalogToken,
    // Half the bound of issue 15 (a revoke is honoured everywhere within a second): the other
    // half is margin for the read's own latency and a loaded machine. Under load this is one
    // version read per process per half second instead of one per request.
    keysVersionMaxAgeMs: 500,
    // A single create in one round trip instead of three (lone-insert.ts says why it is exact).
    insertIfCatalog: loneInsert(driver),
    rateCounter: new PostgresRateCounter(driver),
  };
}
