import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as ids from '../../engine/model/ids.js';
import { openStore } from '../../engine/store/index.js';
import type { Actor } from '../../engine/store/types.js';

// Record ids are UUIDv7 (RFC 9562 §5.7): the contract's "UUID", time-ordered so a batch's
// primary-key entries append to the b-tree instead of landing all over it.
const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const msOf = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };

describe('newId', () => {
  it('draws UUIDv7 ids carrying the current time, strictly increasing and distinct within a process', () => {
    const newId = (ids as { newId?: () => string }).newId;
    expect(typeof newId).toBe('function');
    const before = Date.now();
    const drawn = Array.from({ length: 50_000 }, () => newId!());
    const after = Date.now();
    for (const id of drawn) expect(id).toMatch(V7);
    expect(ids.isUuid(drawn[0])).toBe(true);
    expect(msOf(drawn[0]!)).toBeGreaterThanOrEqual(before);
    // The counter may carry the time forward by a few ms when more than ~2,000 ids fall in one ms.
    expect(msOf(drawn.at(-1)!)).toBeLessThanOrEqual(after + 50);
    for (let i = 1; i < drawn.length; i++) if (!(drawn[i - 1]! < drawn[i]!)) expect.fail(`id ${i} does not follow id ${i - 1}: ${drawn[i - 1]} ${drawn[i]}`);
    // 62 random bits per id: two draws of the same ms still differ in their random tail.
    expect(new Set(drawn.map((id) => id.slice(19))).size).toBe(drawn.length);
  });

  it('gives the records of a bulk-create ascending v7 ids, in the order they were sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ss-ids-'));
    const store = openStore({ path: join(dir, 'schemasync.db'), filesDir: false, notice: () => {} });
    try {
      await store.createObject({ name: 'deal', attributes: [{ name: 'title', type: 'text' }] }, { kind: 'runtime' });
      const out = await store.bulkCreate('deal', Array.from({ length: 3000 }, (_, i) => ({ title: `t${i}` })), actor);
      const one = await store.createRecord('deal', { title: 'later' }, actor);
      const all = [...out.map((r) => r.id), one.id];
      for (const id of all) expect(id).toMatch(V7);
      expect([...all].sort()).toEqual(all);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
