import type { RecordOut } from '../model/stored.js';
import type { SchemaClient } from '../sdk/index.js';
import { pathSegment as seg } from '../sdk/transport.js';

/**
 * The two calls the MCP tools need that the SDK does not offer yet: cross-object search
 * (`POST /search`) and running a view (`GET /views/:name/records`), contract.md §3. They go
 * through the SDK's transport (auth header, retries, error classes), as every SDK method
 * does; once `client.search` / `client.views.run` exist these become one-line calls.
 * An instance without the route answers 404 ROUTE_NOT_FOUND, which the tool reports.
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

export async function runView(
  client: SchemaClient,
  view: string,
  args: Record<string, unknown>,
): Promise<{ records: RecordOut[]; nextCursor: string | null; total?: number }> {
  const query: Record<string, string | number | undefined> = {
    limit: args['limit'] as number | undefined,
    cursor: args['cursor'] as string | undefined,
  };
  const answer = await client.transport.request<RecordOut[]>('GET', `/views/${seg(view, 'View name')}/records`, { query });
  return { records: answer.data, nextCursor: answer.page?.nextCursor ?? null, ...(answer.page?.total !== undefined ? { total: answer.page.total } : {}) };
}
