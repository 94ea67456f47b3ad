import { startTestServer } from '../api/helpers.js';
import { defineCliSuite } from './plan-suite.js';

// The same CLI suite against the routes and the real SQLite store in this process (no child
// server): plan.test.ts runs it against `schemasync serve`. Needs `npm run build`.
defineCliSuite('plan, sync, pull against the routes over the real store in process', async () => {
  const s = await startTestServer({ rateLimit: false, logger: false });
  return {
    baseUrl: s.base,
    key: s.ownerKey,
    stop: () => s.close(),
  };
});
