import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../engine/store/types.js';
import { freePort } from '../support/port.js';
import { expectError, startTestServer, type TestServer } from './helpers.js';

/**
 * A database that cannot be reached while the server runs (issue 15 "Bad input and faults")
 * answers a masked 503 in the envelope — which clients retry — not a 500 and never the
 * driver's words. The failure is node-postgres's own, from a real refused connection.
 */
async function refusedConnectionError(): Promise<unknown> {
  const port = await freePort();
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'x', password: 'secret-in-url', database: 'x' });
  client.on('error', () => undefined);
  return client.connect().then(
    () => new Error('connected to a closed port?'),
    (err: unknown) => err,
  );
}

let s: TestServer;
let failure: unknown;
beforeAll(async () => {
  failure = await refusedConnectionError();
  const down = (store: Store): Store =>
    new Proxy(store, {
      get: (target, prop, receiver) => {
        if (prop === 'listObjects') return () => Promise.reject(failure);
        if (prop === 'listRoles') return () => Promise.reject(new Error('a bug, not the database'));
        return Reflect.get(target, prop, receiver);
      },
    });
  s = await startTestServer({ wrap: down });
});
afterAll(() => s.close());

describe('the database unreachable under a running server', () => {
  it('answers 503 with the masked message, no code, nothing of the driver', async () => {
    const r = await s.call('GET', '/schema/objects');
    expectError(r, { status: 503, code: undefined, message: 'Internal server error' });
    expect(r.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|secret/);
  });

  it('any other failure stays a masked 500', async () => {
    expectError(await s.call('GET', '/roles'), { status: 500, code: undefined, message: 'Internal server error' });
  });
});
