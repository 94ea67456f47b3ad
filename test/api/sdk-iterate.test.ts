import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaClient } from '../../engine/sdk/index.js';
import { startTestServer, type TestServer } from './helpers.js';

// contract.md §5: records(object) offers an async iterator over every page of a search.
describe('SDK records(object).iterate', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ logger: false });
    await s.defineObject('item', [{ name: 'n', type: 'integer' }]);
    await s.call('POST', '/records/item/bulk-create', { body: { records: Array.from({ length: 23 }, (_, n) => ({ n })) } });
  });
  afterAll(async () => s.close());

  it('yields every matching record once, across pages, in the sort order', async () => {
    const client = new SchemaClient({ baseUrl: s.base, apiKey: s.ownerKey });
    const seen: number[] = [];
    for await (const r of client.records('item').iterate({ filter: { n: { gte: 3 } }, sort: [{ attribute: 'n', direction: 'desc' }], limit: 5 })) {
      seen.push(r.values['n'] as number);
    }
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => 22 - i));
  });
});
