/**
 * Waiting out a rate limit (issue 17: import "respects the bulk rate bucket (waits and
 * retries on 429, saying so)"; export and `list --all` page through the default bucket).
 * The limits are per minute and the service sends no retry-after header
 * (service-interface.md Errors rule 5), so the waits grow 2, 4, 8, 16 s and then stay at
 * 30 s: a full minute has passed by the fifth retry whatever the window's phase. A 429
 * means the request was not run (the limiter answers before any handler), so sending the
 * same request again — same idempotency key — is safe.
 */
const WAITS_MS = [2_000, 4_000, 8_000, 16_000, 30_000];
/** About five minutes of waiting before giving up: the limit is not lifting. */
const MAX_WAITS = 13;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function isThrottled(err: unknown): boolean {
  return (err as { status?: unknown } | null)?.status === 429;
}

export async function whileThrottled<T>(send: () => Promise<T>, say: (waitSeconds: number) => void): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (!isThrottled(err) || attempt >= MAX_WAITS) throw err;
      const wait = WAITS_MS[Math.min(attempt, WAITS_MS.length - 1)]!;
      say(wait / 1000);
      await sleep(wait);
    }
  }
}
