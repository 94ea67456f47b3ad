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

  /**
   * What the request itself sent: without the keys version's read (a snapshot of three
   * statements), which any request makes once the process's last read is 500 ms old — on a
   * loaded machine that may fall inside the request measured.
   */
  const own = (sent: string[]): string[] =>
    /^BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY/.test(sent[0] ?? '') && /'keys_version'/.test(sent[1] ?? '') && sent[2] === 'COMMIT' ? sent.slice(3) : sent;

  /** The one-statement create: the INSERT, guarded by the catalog token (postgres/lone-insert.ts). */
  const LONE = /^INSERT INTO "r_item" \(.*\) SELECT \$1, .* WHERE \(SELECT value FROM _ss_meta WHERE key = 'catalog_version'\) = \$\d+ AND current_setting\('transaction_isolation'\) = 'serializable'$/;

  it('a record create is one statement: the INSERT, guarded by the catalog token (its search rows by trigger)', async () => {
    // The first request of a window reads the keys version; the ones after it reuse it.
    expect((await s.call('POST', '/records/item', { body: { name: 'warm' } })).status).toBe(201);
    let id = '';
    const sent = await queriesDuring(async () => {
      const made = await s.call('POST', '/records/item', { body: { name: 'one', qty: 1, code: 'A-1' } });
      expect(made.status).toBe(201);
      expect(made.body.data).toMatchObject({ object: 'item', version: 1, values: { name: 'one', qty: 1, code: 'A-1' } });
      id = made.body.data.id as string;
    });
    expect(own(sent), sent.join('\n')).toHaveLength(1);
    expect(own(sent)[0]).toMatch(LONE);
    // What it answered is what is stored, search row included.
    const got = await s.call('GET', `/records/item/${id}`);
    expect(got.body.data).toMatchObject({ id, version: 1, values: { name: 'one', qty: 1, code: 'A-1' } });
    const found = await s.call('POST', '/search', { body: { query: 'one' } });
    expect((found.body.data as { id: string }[]).map((h) => h.id)).toContain(id);
    // A read: one snapshot, the token with its BEGIN.
    const read = await queriesDuring(async () => expect((await s.call('GET', `/records/item/${id}`)).status).toBe(200));
    expect(own(read), read.join('\n')).toHaveLength(3);
    expect(read[0]).toMatch(/^BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT value FROM _ss_meta/);
  });

  it('a create with an idempotency key runs in a transaction, and leaves the reused keys version alone: the next create costs one again', async () => {
    expect((await s.call('POST', '/records/item', { body: { name: 'warm again' } })).status).toBe(201);
    const keyed = await queriesDuring(async () => {
      const made = await s.call('POST', '/records/item', { body: { name: 'keyed' }, headers: { 'idempotency-key': `k-${Date.now()}` } });
      expect(made.status).toBe(201);
    });
    expect(keyed.some((q) => /^BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT value FROM _ss_meta/.test(q)), keyed.join('\n')).toBe(true);
    expect(keyed.some((q) => LONE.test(q))).toBe(false);
    const next = await queriesDuring(async () => expect((await s.call('POST', '/records/item', { body: { name: 'after keyed' } })).status).toBe(201));
    expect(own(next), next.join('\n')).toHaveLength(1);
  });

  it('a unique value already taken: the statement fails, the transaction path answers exactly as it does for a keyed create', async () => {
    expect((await s.call('POST', '/records/item', { body: { name: 'holder', code: 'U-1' } })).status).toBe(201);
    let lone: { status: number; body: unknown } | undefined;
    const sent = await queriesDuring(async () => {
      lone = await s.call('POST', '/records/item', { body: { name: 'clash', code: 'U-1' } });
    });
    // (The keys version may be read first: its 500 ms may have run out.)
    const at = sent.findIndex((q) => LONE.test(q));
    expect(at, sent.join('\n')).toBeGreaterThanOrEqual(0);
    expect(sent[at + 1]).toMatch(/^BEGIN ISOLATION LEVEL SERIALIZABLE/);
    const keyed = await s.call('POST', '/records/item', { body: { name: 'clash', code: 'U-1' }, headers: { 'idempotency-key': `u-${Date.now()}` } });
    expect(lone!.status).toBe(400);
    expect(lone!.body, JSON.stringify([lone!.body, keyed.body])).toEqual(keyed.body);
    expect(lone!.body).toMatchObject({ code: 'SCHEMA_VALIDATION_FAILED', errors: [{ path: ['code'] }] });
    const stored = await s.call('POST', '/records/item/search', { body: { filter: { code: 'U-1' } } });
    expect(stored.body.data).toHaveLength(1);
  });

  it('a relation value is checked in a transaction; a null one needs no read and costs one statement', async () => {
    await s.defineObject('part', [{ name: 'item', type: 'relation', target: 'item' }, { name: 'label', type: 'text' }]);
    const target = (await s.call('POST', '/records/item', { body: { name: 'target' } })).body.data.id as string;
    expect((await s.call('POST', '/records/part', { body: { label: 'warm' } })).status).toBe(201);
    const linked = await queriesDuring(async () => expect((await s.call('POST', '/records/part', { body: { item: target } })).status).toBe(201));
    expect(own(linked)[0]).toMatch(/^BEGIN ISOLATION LEVEL SERIALIZABLE/);
    expect(linked.some((q) => /FROM "r_item" WHERE id = \$1/.test(q))).toBe(true);
    const missing = await s.call('POST', '/records/part', { body: { item: '00000000-0000-4000-8000-000000000000' } });
    expect(missing.status).toBe(400);
    const unlinked = await queriesDuring(async () => expect((await s.call('POST', '/records/part', { body: { item: null, label: 'x' } })).status).toBe(201));
    expect(own(unlinked), unlinked.join('\n')).toHaveLength(1);
  });

  it('a push through another process is seen by the very next create here: the guarded INSERT inserts nothing, the transaction writes it', async () => {
    for (let round = 0; round < 3; round++) {
      const attribute = `extra${round}`;
      expect((await s.call('POST', '/records/item', { body: { name: 'before' } })).status).toBe(201);
      await other.addAttribute('item', { name: attribute, type: 'text', required: true, default: 'dflt' }, { kind: 'runtime' });
      let made: { status: number; body: any; text: string } | undefined;
      const sent = await queriesDuring(async () => {
        made = await s.call('POST', '/records/item', { body: { name: 'after' } });
      });
      expect(made!.status, made!.text).toBe(201);
      // Checked against the new schema: the required attribute took its default.
      expect(made!.body.data.values[attribute]).toBe('dflt');
      const at = sent.findIndex((q) => LONE.test(q));
      expect(at, sent.join('\n')).toBeGreaterThanOrEqual(0);
      expect(sent[at + 1]).toMatch(/^BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT value FROM _ss_meta/);
      const stored = await s.call('GET', `/records/item/${made!.body.data.id}`);
      expect(stored.body.data.values[attribute]).toBe('dflt');
      // A value the cached schema did not know: the transaction path, with the new schema.
      const named = await s.call('POST', '/records/item', { body: { name: 'named', [attribute]: 'x' } });
      expect(named.status, named.text).toBe(201);
      expect(named.body.data.values[attribute]).toBe('x');
      // Then one statement again.
      const next = await queriesDuring(async () => expect((await s.call('POST', '/records/item', { body: { name: 'next' } })).status).toBe(201));
      expect(own(next), next.join('\n')).toHaveLength(1);
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
