import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AttributeDecl, Declaration } from '../../engine/model/declaration.js';
import { openStore } from '../../engine/store/index.js';
import type { Store } from '../../engine/store/types.js';
import { mulberry32 } from '../support/random.js';

/**
 * PushOptions.handOver is a cache: the store keeps the pushed declaration object instead of
 * parsing what it wrote on the next read. On a randomised corpus of pushes (schema changes,
 * no-op pushes whose declaration differs only in key order), the cached answer must equal
 * the uncached one: the same push without handOver, and a fresh store reading the file.
 */
let dir: string;
let cached: Store;
let plain: Store;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ss-handover-'));
  cached = openStore({ path: join(dir, 'cached.db'), filesDir: false });
  plain = openStore({ path: join(dir, 'plain.db'), filesDir: false });
});
afterEach(async () => {
  await cached.close();
  await plain.close();
  rmSync(dir, { recursive: true, force: true });
});


function randomDeclaration(next: () => number): Declaration {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const objects: Declaration['objects'] = {};
  const count = 1 + Math.floor(next() * 4);
  for (let o = 0; o < count; o++) {
    const attributes: Record<string, AttributeDecl> = {};
    const n = 1 + Math.floor(next() * 5);
    for (let a = 0; a < n; a++) {
      const name = pick(['title', 'amount', 'stage', 'done', 'note', 'count']);
      const type = pick(['text', 'integer', 'number', 'boolean', 'select'] as const);
      attributes[name] = type === 'select' ? { type, options: ['a', 'b', pick(['c', 'd'])] } : next() < 0.3 ? { type, label: `L${a}` } : { type };
    }
    objects[pick(['deal', 'company', 'person', 'task', 'note'])] = { attributes, ...(next() < 0.3 ? { label: `Object ${o}` } : {}) };
  }
  return { objects, views: {} };
}

/** The same declaration with every object's keys in reverse order: no plan step, another text. */
function reordered(d: Declaration): Declaration {
  const objects = Object.fromEntries(
    Object.entries(d.objects)
      .reverse()
      .map(([name, o]) => [name, { ...o, attributes: Object.fromEntries(Object.entries(o.attributes).reverse()) }]),
  );
  return { ...d, objects };
}

describe('store: the handOver cache agrees with the uncached reads', () => {
  for (const seed of [1, 7, 42, 1234]) {
    it(`seed ${seed}: cached and uncached sources are the same after every push`, async () => {
      const next = mulberry32(seed);
      for (let step = 0; step < 12; step++) {
        const decl = step % 3 === 2 ? reordered((await plain.findSource('s'))!.declaration) : randomDeclaration(next);
        const a = await cached.pushSource('s', structuredClone(decl), { allowDestructive: true, handOver: true });
        const b = await plain.pushSource('s', structuredClone(decl), { allowDestructive: true });
        expect(a.version, `seed ${seed} step ${step}`).toBe(b.version);
        const fromCache = await cached.findSource('s');
        const fromFile = await plain.findSource('s');
        expect(fromCache, `seed ${seed} step ${step}`).toEqual(fromFile ? { ...fromFile, appliedAt: fromCache?.appliedAt } : fromFile);
        expect(JSON.stringify(fromCache!.declaration)).toBe(JSON.stringify(fromFile!.declaration));
        // A fresh store on the cached store's file parses what was written: the same again.
        const fresh = openStore({ path: join(dir, 'cached.db'), filesDir: false });
        try {
          expect(JSON.stringify((await fresh.findSource('s'))!.declaration)).toBe(JSON.stringify(fromCache!.declaration));
        } finally {
          await fresh.close();
        }
      }
    });
  }
});

describe('store: a source read through another connection', () => {
  it('sees a no-step push that changed the declaration within the same millisecond', async () => {
    // Two stores on one file, as two server processes: each keeps its parsed copy of a source
    // while (version, appliedAt) is unchanged. A frozen clock makes every write land in the
    // same millisecond, which a fast machine does for real.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-24T12:00:00.000Z') });
    const other = openStore({ path: join(dir, 'cached.db'), filesDir: false });
    try {
      const first: Declaration = { objects: { deal: { attributes: { title: { type: 'text' }, amount: { type: 'number' } } } }, views: {} };
      await cached.pushSource('s', first, {});
      expect(Object.keys((await other.findSource('s'))!.declaration.objects['deal']!.attributes)).toEqual(['title', 'amount']);
      const reordered: Declaration = { objects: { deal: { attributes: { amount: { type: 'number' }, title: { type: 'text' } } } }, views: {} };
      const answer = await cached.pushSource('s', reordered, {});
      expect(answer.plan.steps).toEqual([]);
      expect(Object.keys((await other.findSource('s'))!.declaration.objects['deal']!.attributes)).toEqual(['amount', 'title']);
    } finally {
      vi.useRealTimers();
      await other.close();
    }
  });
});
