import pg from 'pg';

/**
 * The statements node-postgres sends from this process while `fn` runs, in order: every
 * `Client.query` is one round trip to the server (the client sends the next only once the
 * last has answered). A pass-through wrapper: the real database answers every one.
 */
export async function queriesDuring(fn: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    sent.push(typeof first === 'string' ? first : String((first as { text?: unknown } | null)?.text ?? ''));
    return original.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  return sent;
}
