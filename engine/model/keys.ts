/**
 * API keys on the wire (contract.md §3 "Roles, keys, views"): the scopes a key may be cut
 * to, and a key as GET /keys lists it and POST /keys answers it. The store, the route
 * schemas, the SDK, the CLI and Studio all read these.
 */
export const SCOPES = [
  'records:read',
  'records:write',
  'schema:read',
  'schema:write',
  'files:read',
  'files:write',
  'keys:manage',
  'search',
  'mcp',
] as const;
export type Scope = (typeof SCOPES)[number];

export interface KeyOut {
  id: string;
  name: string;
  role: string;
  /** null: the key has no scope restriction (its role alone decides). */
  scopes: Scope[] | null;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** POST /keys: the key and its secret, which is shown this once. */
export interface KeyCreated extends KeyOut {
  secret: string;
}
