import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SchemaClient } from '../sdk/index.js';
import { createMcpServer } from './server.js';

/**
 * `POST /v1/mcp` (contract.md §3 "Also served", §6): the MCP server over the Streamable
 * HTTP transport, stateless (a fresh server and transport per request, answers as plain
 * JSON), authenticated by the same key as every route.
 *
 * The tools still reach the data only through the SDK and the public HTTP API, as over
 * stdio, but in-process: the SDK client's `fetch` hands each request to `app.inject`, so it
 * runs through every hook of a real request — key, permission, validation, envelope, rate
 * limit — without a socket. Chosen over an SDK client pointed at the server's own URL
 * because that URL is not always dialable from inside (a 0.0.0.0 or IPv6 bind, a proxy in
 * front, TLS terminated elsewhere), and because inject keeps the caller's address, so the
 * calls a tool makes count in the caller's own rate-limit buckets, not in one shared by
 * every MCP user as 127.0.0.1.
 */
export interface McpHttpOptions {
  /** `serve --mcp-writes`: write tools may be offered to keys that may write records. */
  writes: boolean;
  /** The key as presented, and what it may do (from the request's authenticated actor). */
  apiKey: string;
  actions: readonly string[];
  version?: string;
}

/** A fetch that answers from `app.inject`, as if from `ip`, carrying the MCP request's id. */
export function injectFetch(app: FastifyInstance, from: { ip: string; requestId: string }): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    // One id across the MCP request and the API calls it made, for the log.
    headers['x-request-id'] = from.requestId;
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== 'string') throw new Error('MCP tools send JSON bodies only');
    const res = await app.inject({
      method: (init?.method ?? 'GET') as 'GET',
      url: url.pathname + url.search,
      headers,
      ...(typeof body === 'string' ? { payload: body } : {}),
      remoteAddress: from.ip,
    });
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined) out.set(name, Array.isArray(value) ? value.join(', ') : String(value));
    }
    return new Response(res.rawPayload.length > 0 ? new Uint8Array(res.rawPayload) : null, { status: res.statusCode, headers: out });
  }) as typeof fetch;
}

export async function serveMcpRequest(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, options: McpHttpOptions): Promise<FastifyReply> {
  const client = new SchemaClient({
    baseUrl: `${request.protocol}://${request.host}/v1`,
    apiKey: options.apiKey,
    fetch: injectFetch(app, { ip: request.ip, requestId: request.id }),
    // No retries in-process: a repeat after a 429 would spend more of the caller's own
    // budget; the refusal goes back to the agent, which decides.
    retries: 0,
  });
  const server = createMcpServer({
    client,
    writes: options.writes,
    // Known from the authenticated request: no extra call to GET /keys/self.
    rights: async () => ({ actions: [...options.actions] }),
    ...(options.version !== undefined ? { version: options.version } : {}),
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }); // no sessionIdGenerator: stateless
  await server.connect(transport);
  try {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const web = new Request(`${request.protocol}://${request.host}${request.url}`, { method: 'POST', headers, body: JSON.stringify(request.body) });
    const res = await transport.handleRequest(web, { parsedBody: request.body });
    reply.code(res.status);
    res.headers.forEach((value, name) => {
      if (name !== 'content-length') reply.header(name, value);
    });
    return reply.send(Buffer.from(await res.arrayBuffer()));
  } finally {
    await server.close();
  }
}
