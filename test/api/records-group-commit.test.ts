import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../engine/store/index.js';
import type { SqliteDriver } from '../../engine/store/sqlite/driver.js';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// Group commit (engine/store/sqlite/driver.ts transaction): record writes of concurrent
// clients share COMMITs. Each client must still get its own answer, exactly the valid writes
// land, and if-match, unique and the search index stay as exact as with one commit per write.
// A real server on 127.0.0.1 over a real SQLite file; the clients are concurrent HTTP requests.

let s: TestServer;
let driver: SqliteDriver;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'schemasync-group-'));
  const opened = openSqliteStore({ path: join(dataDir, 'schemasync.db') });
  driver = opened.driver;
  s = await startTestServer({ store: opened.store, dataDir });
  await s.defineObject('item', [
    { name: 'code', type: 'text', unique: true },
    { name: 'note', type: 'text' },
  ]);
  await s.defineObject('counter', [{ name: 'n', type: 'integer', required: true }]);
  await s.defineObject('paper', [
    { name: 'note', type: 'text' },
    { name: 'doc', type: 'document' },
  ]);
});
afterAll(async () => {
  await s.close();
});

/** A word no other record's text starts with (search matches words by prefix). */
const word = (stem: string, i: number) => stem + String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26));

const hits = async (q: string) => {
  const r = await s.call('GET', `/global-search?q=${encodeURIComponent(q)}&limit=100`);
  expect(r.status).toBe(200);
  return (r.body.data as { id: string }[]).map((h) => h.id);
};

describe('record writes of concurrent clients sharing commits', () => {
  it('200 concurrent creates, every 7th breaking unique: exactly the valid ones land, each client gets its own answer', async () => {
    const taken = await s.call('POST', '/records/item', { body: { code: 'taken', note: 'first' } });
    expect(taken.status).toBe(201);
    // Open the clients' connections first: requests on open connections arrive together, as
    // under load; 200 fresh connections arrive one handshake at a time.
    await Promise.all(Array.from({ length: 200 }, () => s.call('GET', '/records/item/search')));
    const commits = driver.commits;
    const bad = (i: number) => i % 7 === 6;
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => s.call('POST', '/records/item', { body: { code: bad(i) ? 'taken' : `c${i}`, note: `note ${i}` } })),
    );
    const landed = answers.filter((_, i) => !bad(i));
    answers.forEach((r, i) => {
      if (bad(i)) expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
      else {
        expect(r.status).toBe(201);
        expect(r.body.data.values).toEqual({ code: `c${i}`, note: `note ${i}` });
      }
    });
    // The writes did share commits (else this test would not exercise grouping at all).
    expect(driver.commits - commits).toBeLessThan(landed.length);
    const listed = await s.call('POST', '/records/item/search', { body: { limit: 500 } });
    const stored = (listed.body.data as { id: string; values: { code: string } }[]).filter((r) => r.values.code !== 'taken');
    expect(stored.map((r) => r.id).sort()).toEqual(landed.map((r) => r.body.data.id as string).sort());
    expect(stored.map((r) => r.values.code).sort()).toEqual(landed.map((r) => r.body.data.values.code as string).sort());
    expect((listed.body.data as { values: { code: string } }[]).filter((r) => r.values.code === 'taken')).toHaveLength(1);
  });

  it('a write refused inside its group leaves no row and no search-index entry; its group neighbours are found', async () => {
    const commits = driver.commits;
    // A create naming a document that does not exist is refused only after its row and its
    // search-index entry were written (records.ts writeCreates checks document values last):
    // only its savepoint undoes them, while its group's other writes land.
    const calls = Array.from({ length: 30 }, (_, i) =>
      i % 3 === 1
        ? s.call('POST', '/records/paper', { body: { note: word('zanzibar', i), doc: randomUUID() } })
        : s.call('POST', '/records/item', { body: { code: `g${i}`, note: word('quokka', i) } }),
    );
    const answers = await Promise.all(calls);
    expect(driver.commits - commits).toBeLessThan(20);
    for (const [i, r] of answers.entries()) {
      if (i % 3 === 1) {
        expectError(r, { status: 400, code: 'SCHEMA_VALIDATION_FAILED', errors: true });
        expect(await hits(word('zanzibar', i))).toEqual([]);
      } else {
        expect(r.status).toBe(201);
        expect(await hits(word('quokka', i))).toEqual([r.body.data.id]);
      }
    }
    const refused = await s.call('POST', '/records/paper/search', { body: {} });
    expect(refused.body.data).toEqual([]);
  });

  it('if-match increments from 50 concurrent clients lose nothing', async () => {
    const made = await s.call('POST', '/records/counter', { body: { n: 0 } });
    const id = made.body.data.id as string;
    const PER_CLIENT = 3;
    let conflicts = 0;
    const client = async () => {
      for (let done = 0; done < PER_CLIENT; ) {
        const got = await s.call('GET', `/records/counter/${id}`);
        const put = await s.call('PUT', `/records/counter/${id}`, {
          body: { n: (got.body.data.values.n as number) + 1 },
          headers: { 'if-match': got.headers.get('etag')! },
        });
        if (put.status === 200) done++;
        else {
          expectError(put, { status: 409, code: 'SCHEMA_CONFLICT' });
          conflicts++;
        }
      }
    };
    await Promise.all(Array.from({ length: 50 }, client));
    const end = await s.call('GET', `/records/counter/${id}`);
    expect(end.body.data.values.n).toBe(50 * PER_CLIENT);
    expect(end.body.data.version).toBe(50 * PER_CLIENT + 1);
    // Stale versions were refused (the clients did race), never applied.
    expect(conflicts).toBeGreaterThan(0);
  });
});
