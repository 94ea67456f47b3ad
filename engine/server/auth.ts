import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.js';
import type { Actor, Store } from '../store/types.js';

/**
 * Who is calling (contract.md §3 "Authentication"): `Authorization: Bearer <key>` or
 * `x-api-key: <key>`. No key at all → 403 SCHEMA_ACTOR_CONTEXT_REQUIRED (Authentication
 * rule 2); a presented key that is malformed, unknown or revoked → 401 AUTH_INVALID_API_KEY.
 */
export function presentedKey(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization;
  if (typeof auth === 'string' && auth.trim() !== '') {
    const m = /^Bearer\s+(.*)$/i.exec(auth.trim());
    // An Authorization header in another scheme is a presented-but-malformed credential.
    return m ? (m[1] ?? '').trim() : '\u0000malformed';
  }
  const header = request.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (typeof key === 'string' && key.trim() !== '') return key.trim();
  return undefined;
}

/** Keys are short opaque tokens; anything else is refused before touching the store. */
const KEY_SHAPE = /^[A-Za-z0-9_\-.]{8,200}$/;

export function authenticate(request: FastifyRequest, store: Store): Actor {
  const key = presentedKey(request);
  if (key === undefined) {
    throw new ServiceError('SCHEMA_ACTOR_CONTEXT_REQUIRED', 'An API key is required: send Authorization: Bearer <key>', {
      fix: 'Pass --api-key, set SCHEMASYNC_API_KEY, or use the key in <data>/credentials.json.',
    });
  }
  const actor = KEY_SHAPE.test(key) ? store.authenticate(key) : null;
  if (!actor) throw new ServiceError('AUTH_INVALID_API_KEY', 'The API key is invalid or has been revoked');
  return actor;
}
