import { describe, expect, it } from 'vitest';
import { isLoopbackUrl } from '../../cli/loopback.js';

// The one rule for "a local instance": watch/dev's default permission for a target
// (contract.md §7) and the hints that speak of the local server both use it.
describe('isLoopbackUrl', () => {
  it('this machine by any of its names', () => {
    for (const u of ['http://127.0.0.1:4400/v1', 'http://localhost/v1', 'http://127.8.9.10:1/v1', 'http://[::1]:4400/v1', 'http://0.0.0.0:4400/v1', 'https://LOCALHOST:4400']) {
      expect(isLoopbackUrl(u), u).toBe(true);
    }
  });
  it('anything else, or not a URL', () => {
    for (const u of ['https://api.example.com/v1', 'http://128.0.0.1/v1', 'http://localhost.example.com/v1', 'http://127.0.0.1.nip.io/v1', 'http://[::2]/v1', 'not a url', undefined]) {
      expect(isLoopbackUrl(u), String(u)).toBe(false);
    }
  });
});
