import type { IncomingMessage } from 'node:http';

/**
 * Read and throw away what is left of a request body, up to `maxBytes` or `maxMs`,
 * whichever comes first; resolves when the body has ended or a bound was reached.
 *
 * Why (issue 21, issue 13): the body reader refuses a body over the limit as soon as the
 * headers announce its length, before reading it, and the answer closes the connection.
 * A socket closed with unread data in it is reset by the kernel, and a client still
 * sending (fetch, node:http, the SDK) then sees EPIPE/ECONNRESET instead of the 413 that
 * was already on its way. Reading the rest first lets every client finish sending and
 * read the answer; the bounds keep a client that announces gigabytes (or trickles) from
 * holding the connection: past them it is closed as before.
 */
export function discardBody(req: IncomingMessage, bounds: { maxBytes: number; maxMs: number }): Promise<void> {
  if (req.complete || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (): void => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', finish);
      req.off('error', finish);
      req.off('close', finish);
      resolve();
    };
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > bounds.maxBytes) finish();
    };
    const timer = setTimeout(finish, bounds.maxMs);
    timer.unref();
    req.on('data', onData);
    req.once('end', finish);
    req.once('error', finish);
    req.once('close', finish);
    req.resume();
  });
}
