import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../../errors.js';
import { actorOf, type RouteDeps } from '../context.js';
import { ok } from '../envelope.js';
import { actionsOf } from '../permissions.js';
import { keySelfSchema } from '../schemas/admin.js';

/**
 * GET /keys/self: a key learns its own role, scopes and the actions they allow together.
 * No route told a key about itself, and a client that offers tools by rights (the MCP
 * server, contract.md §6: "A tool the key's role or scopes withhold is not listed") needs
 * exactly that. `actions` is computed by `can` (actionsOf), the one rule the routes enforce, so what a
 * client shows cannot drift from what the server allows. Any authenticated key may ask:
 * it reveals nothing the key could not learn by trying; the default rate bucket.
 */
export async function keySelfRoutes(app: FastifyInstance, { store }: RouteDeps): Promise<void> {
  app.get('/keys/self', { schema: keySelfSchema }, async (request) => {
    const actor = actorOf(request);
    const key = (await store.listKeys()).find((k) => k.id === actor.keyId);
    // Authenticated a moment ago; gone only if revoked in between.
    if (!key) throw new ServiceError('AUTH_INVALID_API_KEY', 'The API key is invalid or has been revoked');
    return ok({
      id: key.id,
      name: key.name,
      role: key.role,
      scopes: key.scopes,
      actions: actionsOf(actor),
    });
  });
}
