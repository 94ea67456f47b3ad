import type { FastifyBaseLogger } from 'fastify';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { frameworkErrorBody } from './envelope.js';

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (a header block over 16 KB,
 * an unknown method, broken framing). Fastify's default answers `{"error": …}` without a
 * request id; this answers the envelope with an x-request-id (contract.md §3: every
 * response), then closes the connection, since the parser cannot go on after an error.
 */
const CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: 'Request headers are too large' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, message: 'Request body chunk extensions are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'The request took too long to arrive' },
};
const MALFORMED = { status: 400, message: 'The HTTP request could not be parsed' };

/** How long a client that got its answer may keep the closing connection open. */
const CLOSE_GRACE_MS = 5_000;

export function answerClientError(err: Error & { code?: string }, socket: Socket, log: FastifyBaseLogger): void {
  // A reset connection has no one to answer; an answered one reports each further chunk
  // of the refused request as a new error (Node keeps reading it, so closing later does
  // not reset the connection and lose the answer).
  if (err.code === 'ECONNRESET' || socket.destroyed || socket.writableEnded) return;
  // Node's own rule: a response already under way on this keep-alive connection cannot be
  // followed by another without corrupting it.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, message } = CLIENT_ERRORS[err.code ?? ''] ?? MALFORMED;
  const id = randomUUID();
  const body = JSON.stringify(frameworkErrorBody(status, message));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'connection: close\r\n' +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${id}\r\n\r\n${body}`,
  );
  socket.setTimeout(CLOSE_GRACE_MS, () => socket.destroy());
  // The one request log line (app.ts writes it for every other answer).
  log.info({ reqId: id, statusCode: status, clientError: err.code }, 'request');
}
