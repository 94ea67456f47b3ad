import type { LocalServer } from '../engine/server/local.js';

// What `serve` and `dev` share around engine/server/local.ts.

/** Why the owner key printed on this start was created, when it was not the first start. */
export function keyReasonLine(server: LocalServer, credentialsShown: string): string | undefined {
  if (server.createdKeyReason === 'credentials-missing') {
    return `${credentialsShown} was missing, so a new owner key was created (the keys created before still work)`;
  }
  if (server.createdKeyReason === 'credentials-unreadable') {
    return `${credentialsShown} could not be read, so a new owner key was created and written over it (the keys created before still work)`;
  }
  return undefined;
}
