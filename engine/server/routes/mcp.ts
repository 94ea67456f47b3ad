import type { FastifyInstance } from 'fastify';
import { serveMcpRequest } from '../../mcp/http.js';
import { presentedKey } from '../auth.js';
import { actorOf } from '../context.js';
import { errorBody } from '../envelope.js';
import { actionsOf } from '../permissions.js';
import { mcpOtherSchema, mcpPostSchema } from '../schemas/mcp.js';
import { packageVersion } from './health.js';

/**
 * `POST /v1/mcp` (contract.md §3, §6), in the default rate bucket behind the usual key
 * check. No route-level action: like stdio, a key without the `mcp` scope connects and is
 * offered no tools (each call then answers -32602), so both transports behave alike.
 * GET (a server-sent event stream) and DELETE (ending a session) are not offered by a
 * stateless endpoint: 405, which the MCP client takes as "no stream", not as a failure.
 */
export async function mcpRoutes(app: FastifyInstance, options: { writes: boolean }): Promise<void> {
  const version = packageVersion();
  app.post('/mcp', { schema: mcpPostSchema }, async (request, reply) =>
    serveMcpRequest(app, request, reply, {
      writes: options.writes,
      apiKey: presentedKey(request) ?? '',
      actions: actionsOf(actorOf(request)),
      version,
    }),
  );
  const notOffered = async (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send(errorBody(405, 'This MCP endpoint is stateless: send JSON-RPC messages with POST; there is no event stream or session.'));
  app.get('/mcp', { schema: mcpOtherSchema }, notOffered);
  app.delete('/mcp', { schema: mcpOtherSchema }, notOffered);
}
