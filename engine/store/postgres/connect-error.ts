/**
 * `--database <url>` / SCHEMASYNC_DATABASE_URL (contract.md §8): the URL's rule, its masked
 * form, and a failure to reach or log in to the database said as one line (issue 15 "Bad
 * input and faults": the host named, the password never shown, no stack).
 */

export interface DatabaseUrl {
  /** The URL as given, to connect with. */
  url: string;
  /** The URL with its password replaced by `***`: the only form ever printed or logged. */
  masked: string;
  /** `host:port` as the client dials it (port 5432 when the URL names none). */
  address: string;
  database: string;
  user: string;
}

const SCHEMES = new Set(['postgres:', 'postgresql:']);

/** The URL parsed, or why it is not a PostgreSQL URL (the message never holds the password). */
export function parseDatabaseUrl(raw: string): DatabaseUrl | { problem: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { problem: 'is not a URL (expected postgres://user:password@host:5432/database)' };
  }
  if (!SCHEMES.has(u.protocol)) {
    return { problem: `must be a postgres:// URL, got ${u.protocol.replace(/:$/, '')}:// (expected postgres://user:password@host:5432/database)` };
  }
  if (u.hostname === '') return { problem: 'names no host (expected postgres://user:password@host:5432/database)' };
  const masked = new URL(raw);
  if (masked.password !== '') masked.password = '***';
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres';
  return {
    url: raw,
    masked: masked.toString(),
    address: `${u.hostname}:${u.port || '5432'}`,
    database,
    user: decodeURIComponent(u.username),
  };
}

/** The URL with its password masked, or a fixed stand-in when it does not even parse. */
export function maskDatabaseUrl(raw: string): string {
  const parsed = parseDatabaseUrl(raw);
  return 'masked' in parsed ? parsed.masked : '(an unparsable database URL)';
}

/**
 * Starting on a database that cannot be used: printed by the CLI as `Error: <message>` and
 * `hint: <hint>`, exit 1. Built only from the masked URL and fixed words, so no password
 * and no driver text that might echo one reaches the terminal.
 */
export class DatabaseUnavailableError extends Error {
  readonly hint: string;
  constructor(message: string, hint: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'DatabaseUnavailableError';
    this.hint = hint;
  }
}

/** The connection failures a person can fix, by node's socket code or PostgreSQL's SQLSTATE. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS lookup failed)',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset by the server',
  '28P01': 'authentication failed (wrong user or password)',
  '28000': 'authentication failed (the server refused this user)',
  '3D000': 'the database does not exist',
  '53300': 'the server has too many connections',
  '57P03': 'the server is starting up or shutting down',
  '42501': 'permission denied (the user may not create the tables schemasync needs)',
};

function codesOf(err: unknown): string[] {
  const e = err as { code?: unknown; errors?: unknown } | null;
  const own = typeof e?.code === 'string' ? [e.code] : [];
  // Node tries every address of a host name and reports them together (AggregateError).
  const inner = Array.isArray(e?.errors) ? e.errors.flatMap(codesOf) : [];
  return [...own, ...inner];
}

function reasonOf(err: unknown): string | undefined {
  for (const code of codesOf(err)) if (REASONS[code]) return REASONS[code];
  const message = err instanceof Error ? err.message : '';
  // node-postgres's own words when the server wants a password the URL does not give.
  if (/client password must be a string|password authentication|SASL/i.test(message)) return REASONS['28P01'];
  if (/timeout/i.test(message)) return REASONS['ETIMEDOUT'];
  if (/Connection terminated/i.test(message)) return 'the server closed the connection';
  return undefined;
}

const AUTH_CODES = new Set(['28P01', '28000']);

/**
 * `err`, thrown while opening the database, as a DatabaseUnavailableError when it is about
 * reaching or logging in to it; undefined for anything else (a bug, a newer layout), which
 * is reported as it is.
 */
export function describeConnectFailure(url: DatabaseUrl, err: unknown): DatabaseUnavailableError | undefined {
  const reason = reasonOf(err);
  if (reason === undefined) return undefined;
  const auth = reason === REASONS['28P01'] || codesOf(err).some((c) => AUTH_CODES.has(c));
  const hint = auth
    ? `Check the user and password in --database (or SCHEMASYNC_DATABASE_URL) for ${url.address}.`
    : codesOf(err).includes('3D000')
      ? `Create it first (createdb -h ${url.address.replace(/:(\d+)$/, ' -p $1')} ${url.database}), or name another in the URL.`
      : `Check that PostgreSQL is running at ${url.address} and that --database (or SCHEMASYNC_DATABASE_URL) points at it.`;
  return new DatabaseUnavailableError(
    `could not use the PostgreSQL database "${url.database}" at ${url.address} (${url.masked}): ${reason}`,
    hint,
    err,
  );
}
