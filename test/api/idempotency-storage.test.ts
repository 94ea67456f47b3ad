import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRawReader, openTempStore } from './helpers.js';
import { onPostgres } from '../support/backend.js';
import type { Store } from '../../engine/store/types.js';

// The answers the store keeps for idempotency-key replays (contract.md §3: the first answer,
// byte for byte, for 24 h). A 1,000-record bulk-create answers ~250 KB; kept as is, a
// 100,000-row import added ~25 MB to the database, written through the WAL on every batch.
let dir: string;
let store: Store;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'schemasync-idem-'));
  store = await openTempStore(dir);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const bulkAnswer = (n: number): string =>
  JSON.stringify({
    success: true,
    data: {
      records: Array.from({ length: n }, (_, i) => ({
        id: `0190a${String(i).padStart(3, '0')}-1234-7abc-8def-0123456789ab`,
        object: 'item',
        version: 1,
        values: { title: `Deal number ${i} — café 🚀 \u2028`, amount: i + 0.5, won: i % 3 === 0 },
      })),
    },
  });

async function storedLength(key: string): Promise<number> {
  const raw = await openRawReader(dir);
  try {
    const rows = await raw.all<{ n: number | string }>(`SELECT length(body) AS n FROM _ss_idempotency WHERE key = '${key}'`);
    return Number(rows[0]!.n);
  } finally {
    await raw.close();
  }
}

describe('remembered idempotent answers', () => {
  it('keeps a large answer compactly and recalls it byte for byte', async () => {
    const text = bulkAnswer(1000);
    await store.transaction((tx) => tx.rememberIdempotent('scope', 'big', 'h1', { status: 201, body: text }));
    const back = await store.recallIdempotent('scope', 'big', 'h1');
    expect(back).toEqual({ status: 201, body: text });
    expect(await storedLength('big')).toBeLessThan(text.length / 5);
  });

  it('keeps a small answer as its text, and recalls both kinds side by side', async () => {
    const small = JSON.stringify({ success: true, data: { id: 'x', values: { name: 'Idem' } } });
    const big = bulkAnswer(100);
    await store.transaction(async (tx) => {
      await tx.rememberIdempotent('scope', 'small', 'h1', { status: 201, body: small });
      await tx.rememberIdempotent('scope', 'big', 'h2', { status: 200, body: big });
    });
    expect(await storedLength('small')).toBe(small.length);
    expect(await store.recallIdempotent('scope', 'small', 'h1')).toEqual({ status: 201, body: small });
    expect(await store.recallIdempotent('scope', 'big', 'h2')).toEqual({ status: 200, body: big });
    await expect(store.recallIdempotent('scope', 'big', 'other')).rejects.toMatchObject({ code: 'SCHEMA_CONFLICT' });
  });

  it.skipIf(onPostgres())('recalls an answer an earlier version kept as plain text, whatever its size', async () => {
    const text = bulkAnswer(1000);
    await store.close();
    const db = new Database(join(dir, 'schemasync.db'));
    db.prepare('INSERT INTO _ss_idempotency (scope, key, body_hash, status, body, expires_at) VALUES (?, ?, ?, ?, ?, ?)').run('scope', 'old', 'h', 201, text, Date.now() + 60_000);
    db.close();
    store = await openTempStore(dir);
    expect(await store.recallIdempotent('scope', 'old', 'h')).toEqual({ status: 201, body: text });
  });
});
