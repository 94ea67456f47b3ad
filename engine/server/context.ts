import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.js';
import type { Actor, Store } from '../store/types.js';
import type { AuthCache } from './auth.js';
import type { Action } from './permissions.js';

/** Per-route settings read by the app's hooks (auth, permission, rate limit). */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** No key needed (/health, /openapi.json). */
    public?: boolean;
    /** What the caller must be allowed (engine/server/permissions.ts); checked before the handler. */
    action?: Action;
  }
  interface FastifyRequest {
    actor: Actor | null;
  }
}

export interface RouteDeps {
  store: Store;
  /** Remembered authentications; the keys route clears it on revoke. */
  authCache?: AuthCache;
}

/** The authenticated actor; the auth hook guarantees one on non-public routes. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new ServiceError('SCHEMA_ACTOR_CONTEXT_REQUIRED', 'An API key is required: send Authorization: Bearer <key>');
  return request.actor;
}

/**
 * `if-match` (contract.md §3): `"3"`, `3`, `W/"3"` or `*`. The route schema has already
 * checked the shape; this turns it into what the store compares.
 */
export function parseIfMatch(header: string | undefined): number | '*' | undefined {
  if (header === undefined) return undefined;
  const v = header.trim().replace(/^W\//, '').replace(/^"|"$/g, '');
  if (v === '*') return '*';
  return Number(v);
}
