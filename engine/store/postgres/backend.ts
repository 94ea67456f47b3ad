import type { Backend } from '../port.js';
import { CODECS } from './codecs.js';
import { postgresDdl } from './ddl.js';
import { postgresDialect } from './dialect.js';
import { PostgresDriver, type PostgresDriverOptions } from './driver.js';
import { postgresFulltext } from './fulltext.js';
import { PostgresRateCounter } from './rate-counter.js';
import { catalogToken, setupDatabase } from './setup.js';

/**
 * The scale-out backend (issue 15, contract.md §8): PostgreSQL through a node-postgres
 * pool. Opening makes the pool only; the first query connects, and the store's setup
 * transaction creates or brings forward the `_ss_` tables (setup.ts).
 */
export function openPostgresBackend(options: PostgresDriverOptions): Backend {
  const driver = new PostgresDriver(options);
  return {
    name: 'postgres',
    driver,
    dialect: postgresDialect,
    codecs: CODECS,
    ddl: postgresDdl,
    fulltext: postgresFulltext,
    setup: async (tx) => void (await setupDatabase(tx)),
    catalogToken,
    rateCounter: new PostgresRateCounter(driver),
  };
}
