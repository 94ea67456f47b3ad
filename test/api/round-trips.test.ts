import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../engine/store/types.js';
import { onPostgres } from '../support/backend.js';
import { queriesDuring } from '../support/round-trips.js';
import { openTempStore, startTestServer, type TestServer } from './helpers.js';

// What one request costs in round trips to PostgreSQL (issue 15 "Performance"), and that
// the mechanisms that cut them keep contract.md §8's rules: a revoke and a push made through
// another process sharing the database govern this one's requests (within a second for a
// revoke, issue 15; at once for a push).
describe.skipIf(!onPostgres())('round trips per request on PostgreSQL', () => {
  let s: TestServer;
  /** A second store on the same database: another process, as far as this server can tell. */
  let other: Store;
  beforeAll(async () => {
    s = await startTestServer();
    other = await openTempStore(s.dataDir);
    await s.defineObject('item', [
      { name: 'name', type: 'text', required: true },
      { name: 'qty', type: 'integer' },
      { name: 'code', type: 'text', unique: true },
    ]);
  });
  afterAll(async () => {
    await other.close();
    await s.close();
  });

  it('a record create is three: BEGIN with the catalog token, the INSERT (its search rows by trigger), COMMIT', async () => {
    // The first request of a window reads the keys version; the ones after it reuse it.
    expect((await s.call('POST', '/records/item', { body: { name: 'warm' } })).status).toBe(201);
    let id = '';
    const sent = await queriesDuring(async () => {
      const made = await s.call('POST', '/records/item', { body: { name: 'one', qty: 1, code: 'A-1' } });
      expect(made.status).toBe(201);
      id = made.body.data.id as string;
    });
    expect(sent, sent.join('\n')).toHaveLength(3);
    expect(sent[0]).toMatch(/^BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT value FROM _ss_meta WHERE key = 'catalog_version'$/);
    expect(sent[1]).toMatch(/^INSERT INTO "r_item"/);
    expect(sent[2]).toBe('COMMIT');
    // A read: one snapshot, the token with its BEGIN.
    const read = await queriesDuring(async () => expect((await s.call('GET', `/records/item/${id}`)).status).toBe(200));
    expect(read, read.join('\n')).toHaveLength(3);
    expect(read[0]).toMatch(/^BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT value FROM _ss_meta/);
  });

  it('a create with an idempotency key (every SDK create sends one) leaves the reused keys version alone: the next request costs three again', async () => {
    expect((await s.call('POST', '/records/item', { body: { name: 'warm again' } })).status).toBe(201);
    const keyed = await s.call('POST', '/records/item', { body: { name: 'keyed' }, headers: { 'idempotency-key': `k-${Date.now()}` } });
    expect(keyed.status).toBe(201);
    const next = await queriesDuring(async () => expect((await s.call('POST', '/records/item', { body: { name: 'after keyed' } })).status).toBe(201));
    expect(next, next.join('\n')).toHaveLength(3);
  });

  it('a push through another process is seen by the very next request here (the token is read in that request’s transaction)', async () => {
    for (let round = 0; round < 3; round++) {
      const attribute = `extra${round}`;
      expect((await s.call('POST', '/records/item', { body: { name: 'before' } })).status).toBe(201);
      await other.addAttribute('item', { name: attribute, type: 'text' }, { kind: 'runtime' });
      const made = await s.call('POST', '/records/item', { body: { name: 'after', [attribute]: 'x' } });
      expect(made.status, made.text).toBe(201);
      expect(made.body.data.values[attribute]).toBe('x');
    }
  });

  it('a key revoked through this process is refused on its very next request; through another, within a second', async () => {
    const here = await s.keyFor('member');
    expect((await s.call('GET', '/schema/objects', { key: here })).status).toBe(200);
    const id = /^ssk_([0-9a-f]{16})_/.exec(here)![1]!;
    expect((await s.call('DELETE', `/keys/${id}`)).status).toBe(200);
    expect((await s.call('GET', '/schema/objects', { key: here })).status).toBe(401);

    const there = await s.keyFor('member');
    expect((await s.call('GET', '/schema/objects', { key: there })).status).toBe(200);
    await other.revokeKey(/^ssk_([0-9a-f]{16})_/.exec(there)![1]!);
    const revokedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 1_000) status = (await s.call('GET', '/schema/objects', { key: there })).status;
    expect(status).toBe(401);
  });
});
