import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failingCreate } from './failing-store.js';
import { logCapture, startTestServer, type TestServer } from './helpers.js';

// The request log (issue 3): one line per request with its id; a masked 500 keeps its
// real cause in the log under the same id.
const { lines, stream } = logCapture();
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ wrap: failingCreate, logger: { level: 'info', stream } });
});
afterAll(async () => s.close());

describe('request log', () => {
  it('writes one line per request, carrying the request id', async () => {
    const r = await s.call('GET', '/health');
    const id = r.headers.get('x-request-id');
    const mine = lines.filter((l) => l['reqId'] === id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ method: 'GET', url: '/v1/health', statusCode: 200 });
  });

  it('logs the real cause of a masked 500 under the request id', async () => {
    await s.defineObject('note', [{ name: 'a', type: 'integer' }]);
    const r = await s.call('POST', '/records/note', { body: { a: 1 } });
    expect(r.status).toBe(500);
    expect(r.text).not.toContain('secret detail');
    const id = r.headers.get('x-request-id');
    const mine = lines.filter((l) => l['reqId'] === id);
    expect(JSON.stringify(mine)).toContain('secret detail');
    expect(mine.some((l) => l['statusCode'] === 500)).toBe(true);
  });
});
