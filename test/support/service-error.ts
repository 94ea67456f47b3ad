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

/** The ServiceError a call fails with; a call that succeeds fails the test, anything else is rethrown. */
export async function errorOf(fn: () => unknown): Promise<ServiceError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ServiceError) return err;
    throw err;
  }
  throw new Error('expected a ServiceError');
}
