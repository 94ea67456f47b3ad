import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../engine/store/index.js';
import type { Actor, Store } from '../../engine/store/types.js';
import { codeOf } from '../support/service-error.js';

// Store.transaction(fn, { savepoints: false }) (the idempotent write path): the body's writes
// run without a savepoint each, so a failure must end the whole transaction — even one the
// body catches — and a body that succeeds lands whole, search index included.

let dir: string;
let store: Store;
const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };
const row = (i: number) => ({ code: `C-${i}`, title: `Deal number ${i}` });
const count = async () => (await store.search('deal', { limit: 1 })).total;
const hits = async (query: string) => (await store.globalSearch({ query, objects: null, limit: 100 })).map((h) => h.id);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ss-tx-'));
  store = openStore({ path: join(dir, 'schemasync.db'), filesDir: false, notice: () => {} });
  await store.createObject({ name: 'deal', attributes: [{ name: 'code', type: 'text', unique: true }, { name: 'title', type: 'text' }] }, { kind: 'runtime' });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('transaction without a savepoint per write', () => {
  it('commits a body that succeeds, its rows indexed', async () => {
    const out = await store.transaction(async (tx) => {
      const made = await tx.bulkCreate('deal', [row(1), row(2), row(3)], actor);
      await tx.createRecord('deal', { code: 'X', title: 'Zanzibar' }, actor);
      return made;
    }, { savepoints: false });
    expect(out).toHaveLength(3);
    expect(await count()).toBe(4);
    expect(await hits('zanzibar')).toHaveLength(1);
    expect(await hits('"deal number 2"')).toEqual([out[1]!.id]);
  });

  it('rolls the whole transaction back when a write fails, even if the body catches it and goes on', async () => {
    await store.bulkCreate('deal', [row(1)], actor);
    const failed = store.transaction(
      async (tx) => {
        await tx.createRecord('deal', { code: 'BEFORE', title: 'Quixotic' }, actor);
        // The second item repeats a stored unique code: the batch fails after its first row went in.
        expect(await codeOf(() => tx.bulkCreate('deal', [row(2), row(1), row(3)], actor))).toBe('SCHEMA_VALIDATION_FAILED');
        return tx.createRecord('deal', { code: 'AFTER', title: 'Zanzibar' }, actor);
      },
      { savepoints: false },
    );
    await expect(failed).rejects.toThrow(/savepoints: false.*rolled back/);
    expect(await count()).toBe(1);
    expect(await hits('quixotic')).toEqual([]);
    expect(await hits('zanzibar')).toEqual([]);
    // The index is live afterwards: the next writes, single and bulk, are found.
    const one = await store.createRecord('deal', { code: 'LATER', title: 'Zanzibar later' }, actor);
    const two = await store.bulkCreate('deal', [row(7), row(8)], actor);
    expect(await hits('zanzibar')).toEqual([one.id]);
    expect(await hits('"deal number 8"')).toEqual([two[1]!.id]);
  });

  it('keeps the savepoint per write by default: a caught failure is undone alone', async () => {
    await store.bulkCreate('deal', [row(1)], actor);
    await store.transaction(async (tx) => {
      expect(await codeOf(() => tx.bulkCreate('deal', [row(2), row(1)], actor))).toBe('SCHEMA_VALIDATION_FAILED');
      await tx.createRecord('deal', { code: 'AFTER', title: 'Zanzibar' }, actor);
    });
    expect(await count()).toBe(2);
    expect(await hits('zanzibar')).toHaveLength(1);
  });

  it('nests the savepoints of writes inside writes: an inner failure undoes only the inner write', async () => {
    await store.transaction(async (tx) => {
      await tx.createRecord('deal', { code: 'OUTER-1', title: 'first' }, actor);
      // A transaction inside the body: its writes' savepoints sit inside its own.
      await tx.transaction(async (inner) => {
        await inner.createRecord('deal', { code: 'INNER-1', title: 'second' }, actor);
        expect(await codeOf(() => inner.createRecord('deal', { code: 'OUTER-1', title: 'clash' }, actor))).toBe('SCHEMA_VALIDATION_FAILED');
        await inner.createRecord('deal', { code: 'INNER-2', title: 'third' }, actor);
      });
      // A whole inner transaction that fails is undone whole, the outer one goes on.
      expect(
        await codeOf(() =>
          tx.transaction(async (inner) => {
            await inner.createRecord('deal', { code: 'GONE', title: 'gone' }, actor);
            await inner.createRecord('deal', { code: 'INNER-1', title: 'clash' }, actor);
          }),
        ),
      ).toBe('SCHEMA_VALIDATION_FAILED');
      await tx.createRecord('deal', { code: 'OUTER-2', title: 'last' }, actor);
    });
    const codes = (await store.search('deal', { limit: 50 })).records.map((r) => r.values['code']).sort();
    expect(codes).toEqual(['INNER-1', 'INNER-2', 'OUTER-1', 'OUTER-2']);
  });
});
