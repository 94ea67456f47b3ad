import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineCliSuite } from './plan-suite.js';
import { start } from './watch-helpers.js';

// Against `schemasync serve` (the SQLite store) in a child process. Needs `npm run build`.
defineCliSuite('plan, sync, pull against schemasync serve', async (dir) => {
  const server = start(['serve', '--port', '0', '--no-rate-limit', '--data', join(dir, '.schemasync')], dir);
  const m = await server.waitFor(/(http:\/\/127\.0\.0\.1:\d+\/v1)/, 'the server banner');
  const creds = JSON.parse(readFileSync(join(dir, '.schemasync', 'credentials.json'), 'utf8')) as { apiKey: string };
  return {
    baseUrl: m[1]!,
    key: creds.apiKey,
    async stop() {
      if (server.child.exitCode === null) {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    },
  };
});
