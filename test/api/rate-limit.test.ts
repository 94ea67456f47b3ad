import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THROTTLE_MESSAGE } from '../../engine/errors.js';
import { expectError, startTestServer, type TestServer } from './helpers.js';

// Limits (service-interface.md "Limits", Errors rule 5) over real HTTP, with a test clock
// for the one-minute windows.
let s: TestServer;
let clock = 1_000_000;
beforeAll(async () => {
  s = await startTestServer({ rateLimit: true, now: () => clock });
});
afterAll(async () => s.close());

function expectNoLimitHeaders(headers: Headers): void {
  for (const [name] of headers) {
    expect(name).not.toMatch(/rate-?limit|retry-after/i);
  }
}

describe('rate limits', () => {
  it('the default bucket allows 100 a minute, then 429 in the envelope with no code and no headers', async () => {
    for (let i = 0; i < 100; i++) {
      const r = await s.call('GET', '/schema/objects');
      expect(r.status).toBe(200);
    }
    const r = await s.call('GET', '/schema/objects');
    expectError(r, { status: 429, code: undefined, message: THROTTLE_MESSAGE, errors: false });
    expectNoLimitHeaders(r.headers);
    // Unauthenticated requests count too, and are throttled before auth.
    expectError(await s.call('GET', '/keys', { key: null }), { status: 429, code: undefined, message: THROTTLE_MESSAGE });
  });

  it('health and source pushes are exempt', async () => {
    for (let i = 0; i < 20; i++) expect((await s.call('GET', '/health')).status).toBe(200);
    for (let i = 0; i < 15; i++) {
      const r = await s.call('PUT', '/schema/sources/crm', { body: { declaration: { objects: {} }, dryRun: true } });
      expect(r.status).not.toBe(429);
    }
  });

  it('bulk routes have their own bucket of 10', async () => {
    const ids = [crypto.randomUUID()];
    for (let i = 0; i < 10; i++) {
      const r = await s.call('POST', '/records/deal/bulk-delete', { body: { ids } });
      expect(r.status).not.toBe(429);
    }
    const r = await s.call('POST', '/records/deal/bulk-create', { body: { records: [{}] } });
    expectError(r, { status: 429, code: undefined, message: THROTTLE_MESSAGE });
    expectNoLimitHeaders(r.headers);
  });

  it('a new minute starts a new window', async () => {
    clock += 60_000;
    expect((await s.call('GET', '/schema/objects')).status).toBe(200);
    expect((await s.call('POST', '/records/deal/bulk-delete', { body: { ids: [crypto.randomUUID()] } })).status).not.toBe(429);
  });

  it('rateLimit: false turns every bucket off', async () => {
    const open = await startTestServer({ rateLimit: false });
    try {
      for (let i = 0; i < 12; i++) {
        expect((await open.call('POST', '/records/deal/bulk-delete', { body: { ids: [crypto.randomUUID()] } })).status).not.toBe(429);
      }
    } finally {
      await open.close();
    }
  });
});

describe('remembered authentications', () => {
  it('a key revoked behind the server (not via DELETE /keys) stops working within 5 seconds', async () => {
    let now = 5_000_000;
    const t = await startTestServer({ rateLimit: false, now: () => now });
    try {
      const key = await t.keyFor('member');
      expect((await t.call('GET', '/schema/objects', { key })).status).toBe(200);
      const id = (await t.store.listKeys()).find((k) => k.role === 'member')!.id;
      await t.store.revokeKey(id);
      now += 5_001;
      expectError(await t.call('GET', '/schema/objects', { key }), { status: 401, code: 'AUTH_INVALID_API_KEY' });
    } finally {
      await t.close();
    }
  });
});
