import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.js';
import { RequestValidationError } from './envelope.js';
import { IF_MATCH } from './schemas/common.js';
import type { Actor, Store } from '../store/types.js';
import type { AuthCache } from './auth.js';
import type { Action } from './permissions.js';
import type { RecordAction } from '../model/roles.js';

/** Per-route settings read by the app's hooks (auth, permission, rate limit). */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** No key needed (/health, /openapi.json). */
    public?: boolean;
    /** What the caller must be allowed (engine/server/permissions.ts); checked before the handler. */
    action?: Action;
    /** On record routes: which record action, so a custom role is checked per object (permissions.ts). */
    record?: RecordAction;
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
 * `if-match` (contract.md §3): `"3"`, `3` or `*`, read with the pattern the route schema
 * has already checked it against; this turns it into what the store compares.
 */
export function parseIfMatch(header: string | undefined): number | '*' | undefined {
  if (header === undefined) return undefined;
  const m = IF_MATCH.exec(header);
  // Unreachable behind the route schemas; a route without one still answers 400, not NaN.
  if (!m) throw new RequestValidationError([{ path: ['headers', 'if-match'], message: 'must be "<version>", a bare version, or *' }]);
  return m[1] ? '*' : Number(m[2] ?? m[3]);
}
