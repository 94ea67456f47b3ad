/**
 * The rate limits count in windows aligned to the clock's minutes (engine/server/rate-limit.ts).
 * A test that spends a bucket with the real clock and then expects a 429 must not straddle
 * two of them, or the second request meets a fresh bucket: this waits for the next minute
 * when fewer than `marginMs` of the current one are left.
 */
export async function clearOfMinuteEnd(marginMs = 10_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 200));
}
