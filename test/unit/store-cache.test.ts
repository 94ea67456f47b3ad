import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, STATEMENT_CACHE_SIZE } from '../../engine/store/index.js';
import type { SqliteDriver } from '../../engine/store/sqlite/driver.js';
import type { Store } from '../../engine/store/types.js';
import type { Actor } from '../../engine/store/types.js';

// The prepared-statement cache is bounded (issue 3 audit: 3,000 searches with different
// `in` list lengths grew RSS to 2 GB), while the record paths stay cached.
const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };
let dir: string;
let store: Store;
let driver: SqliteDriver;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ss-store-cache-'));
  ({ store, driver } = openSqliteStore({ path: join(dir, 'schemasync.db'), filesDir: false }));
  await store.createObject({ name: 'deal', attributes: [{ name: 'code', type: 'text', unique: true }, { name: 'tags', type: 'multiselect', options: ['a', 'b'] }] }, { kind: 'runtime' });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('statement cache', () => {
  it('stays bounded under searches of many distinct shapes, and the answers stay right', async () => {
    const made = (await store.bulkCreate('deal', Array.from({ length: 20 }, (_, i) => ({ code: `C-${i}` })), actor));
    const sorts = [undefined, [{ attribute: 'code' as const, direction: 'asc' as const }], [{ attribute: 'code' as const, direction: 'desc' as const }]];
    for (let n = 1; n <= 64; n++) {
      const list = Array.from({ length: n }, (_, i) => `C-${i}`);
      for (const sort of sorts) {
        for (const op of ['in', 'nin'] as const) {
          const page = (await store.search('deal', { filter: { code: { [op]: list } }, limit: 1, ...(sort ? { sort } : {}) }));
          expect(page.total).toBe(op === 'in' ? Math.min(n, 20) : Math.max(20 - n, 0));
          expect(driver.statementCacheSize()).toBeLessThanOrEqual(STATEMENT_CACHE_SIZE);
        }
      }
    }
    expect(driver.statementCacheSize()).toBe(STATEMENT_CACHE_SIZE);
    // Record paths still work after their statements were evicted.
    expect((await store.getRecord('deal', made[3]!.id)).values['code']).toBe('C-3');
    expect((await store.updateRecord('deal', made[3]!.id, { code: 'X' }, 1, actor)).version).toBe(2);
  });

  it('does not keep the large statements of long in-lists at all', async () => {
    await store.bulkCreate('deal', [{ code: 'C-5' }], actor);
    const before = driver.statementCacheSize();
    for (let n = 100; n <= 1000; n += 10) {
      const page = (await store.search('deal', { filter: { code: { in: Array.from({ length: n }, (_, i) => `C-${i}`) } } }));
      expect(page.total).toBe(1);
    }
    expect(driver.statementCacheSize()).toBe(before);
  });

  it('keeps the statements in use (least recently used goes first)', () => {
    const sql = 'SELECT COUNT(*) AS n FROM "r_deal"';
    const kept = driver.stmt(sql);
    for (let i = 0; i < STATEMENT_CACHE_SIZE * 3; i++) {
      driver.stmt(`SELECT ${i} AS n`);
      expect(driver.stmt(sql)).toBe(kept);
    }
    // A statement not used since is evicted and prepared afresh.
    const cold = driver.stmt('SELECT 42 AS cold');
    for (let i = 0; i < STATEMENT_CACHE_SIZE; i++) driver.stmt(`SELECT ${i} AS m`);
    expect(driver.stmt('SELECT 42 AS cold')).not.toBe(cold);
    expect(driver.statementCacheSize()).toBe(STATEMENT_CACHE_SIZE);
  });
});
