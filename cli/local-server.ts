import { startLocalServer, type LocalServer, type LocalServerOptions } from '../engine/server/local.js';
import { CliError } from './errors.js';

/**
 * What `serve` and `dev` share around engine/server/local.ts: start-up failures as one
 * line, and the line saying why a key was created on a later start.
 */

/** startLocalServer, with its listen failures said in the CLI's words. */
export async function startServer(options: LocalServerOptions & { host: string; port: number }): Promise<LocalServer> {
  try {
    return await startLocalServer(options);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const { host, port } = options;
    if (e.code === 'EADDRINUSE') throw new CliError(`port ${port} on ${host} is already in use`, { hint: 'Pick another with --port.' });
    // Only the listen call's EACCES is about the port; a data folder's is a DataFolderError.
    if (e.code === 'EACCES' && e.syscall === 'listen') throw new CliError(`not allowed to listen on ${host}:${port}`);
    throw err;
  }
}

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
