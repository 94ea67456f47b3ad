import { createServer } from '../../engine/server/app.js';
import { defineCliSuite } from './plan-suite.js';
import { memoryStore } from './sync-memory.js';

// The same CLI suite against the real routes over an in-memory store that pushes with the
// real planner and applies its steps in order (no SQLite). Needs `npm run build`.
defineCliSuite('plan, sync, pull against the routes over a memory store', async () => {
  const store = memoryStore();
  const app = await createServer({ store, rateLimit: false, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const key = (await store.createKey({ name: 'owner', role: 'owner', scopes: null })).secret;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, key, stop: async () => void (await app.close()) };
});
