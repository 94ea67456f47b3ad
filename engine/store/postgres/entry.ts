import { openBackendStore } from '../index.js';
import type { RateCounter, Store } from '../types.js';
import { openPostgresBackend } from './backend.js';
import { maskDatabaseUrl } from './connect-error.js';
import { PostgresRateCounter } from './rate-counter.js';

/**
 * How engine/store/open.ts reaches the PostgreSQL backend (contract.md §8): the pool, the
 * setup of an empty (or older) database in one transaction, then the backend-neutral Store,
 * with the rate-limit counter every process on this database shares.
 */
export async function openPostgres(options: { url: string; filesDir: string }): Promise<Store> {
  const backend = openPostgresBackend({ url: options.url });
  let store: Store;
  try {
    // `path` names where the data lives in messages: never the password.
    store = await openBackendStore(backend, { path: maskDatabaseUrl(options.url) });
  } catch (err) {
    await backend.driver.close().catch(() => undefined);
    throw err;
  }
  const rateCounter: RateCounter = new PostgresRateCounter(backend.driver);
  // The Store's optional member (engine/store/types.ts), set once before anyone holds the store.
  Object.defineProperty(store, 'rateCounter', { value: rateCounter, enumerable: true });
  return store;
}
