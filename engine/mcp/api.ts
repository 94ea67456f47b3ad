import type { SchemaClient } from '../sdk/index.js';

/**
 * The one call the MCP tools need that the SDK does not offer yet: cross-object search
 * (`POST /search`, contract.md §3). It goes through the SDK's transport (auth header,
 * retries, error classes), as every SDK method does; once `client.search` exists this
 * becomes a one-line call. An instance without the route answers 404 ROUTE_NOT_FOUND,
 * which the tool reports.
 */
export interface SearchHit {
  object: string;
  id: string;
  score: number;
  snippet: string;
  highlights: [number, number][];
  attribute: string;
}

export async function globalSearch(client: SchemaClient, args: Record<string, unknown>): Promise<SearchHit[]> {
  const body: Record<string, unknown> = { query: args['query'] };
  if (args['objects'] !== undefined) body['objects'] = args['objects'];
  if (args['limit'] !== undefined) body['limit'] = args['limit'];
  // Read-only, so safe to repeat although it is a POST.
  return (await client.transport.request<SearchHit[]>('POST', '/search', { body, idempotent: true })).data;
}
