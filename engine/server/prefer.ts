import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * `Prefer: return=minimal` (RFC 7240 §4.2), as PostgREST and Supabase take it: the client
 * does not need the written rows back. The bulk write routes then answer a count
 * (`{ created: n }`, `{ updated: n }`) instead of every record again — for a 1,000-row
 * bulk-create, ~250 KB of JSON the server would build, remember for its idempotency key and
 * send, and the client read, for nothing (`records import` asks for it). Without the
 * preference, or with `return=representation`, the answer is the contract's (§3).
 *
 * Unknown preferences and malformed parts are ignored (RFC 7240 §2: a server ignores what it
 * does not understand); the header may repeat, list several preferences, quote the value
 * and carry parameters after `;`. The last `return` named wins, as in PostgREST.
 */
function prefersMinimal(request: FastifyRequest): boolean {
  const header = request.headers['prefer'];
  if (header === undefined) return false;
  let minimal = false;
  for (const part of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [token = '', value = ''] = (part.split(';', 1)[0] ?? '').split('=', 2).map((s) => s.trim().toLowerCase());
    if (token === 'return') minimal = value.replace(/^"(.*)"$/, '$1') === 'minimal';
  }
  return minimal;
}

/**
 * How a bulk write answers its records: `{ records }`, or under `return=minimal` their count
 * as `{ [count]: n }`, saying the preference was honoured (RFC 7240 §3). The header goes only
 * on an answer written now: a replay under an idempotency key sends the first answer's body
 * again (contract.md §3) without it, whichever preference the repeat carries — a client that
 * changes its preference between repeats of one key reads the answer's shape, not the header.
 */
export function bulkAnswer(request: FastifyRequest, reply: FastifyReply, count: 'created' | 'updated'): (records: readonly unknown[]) => object {
  if (!prefersMinimal(request)) return (records) => ({ records });
  return (records) => {
    reply.header('preference-applied', 'return=minimal');
    return { [count]: records.length };
  };
}
