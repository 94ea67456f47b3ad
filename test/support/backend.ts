import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Which store the API suite runs on: each vitest project provides its own (vitest.config.ts). */
    backend: 'sqlite' | 'postgres';
  }
}

/** The backend of the running vitest project (SQLite when run outside one). */
export function testBackend(): 'sqlite' | 'postgres' {
  return inject('backend') ?? 'sqlite';
}

export const onPostgres = (): boolean => testBackend() === 'postgres';

/**
 * For `it.skipIf(…)`: a test about the SQLite file itself (it opens it beside the server),
 * which has no PostgreSQL counterpart. The reason is the argument, so the test says why.
 */
export function sqliteOnly(_why: string): boolean {
  return onPostgres();
}
