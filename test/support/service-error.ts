import { ServiceError } from '../../engine/errors.js';

/** The ServiceError code a call fails with (undefined when it succeeds); anything else is rethrown. */
export async function codeOf(fn: () => unknown): Promise<string | undefined> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ServiceError) return err.code;
    throw err;
  }
  return undefined;
}
