/**
 * A value read from the database and reused for at most `maxAgeMs` (the keys version,
 * store.ts `keysVersion`). The age counts from when the read was sent, not when it answered:
 * its snapshot is taken after that moment, so it reflects every commit before it. A caller
 * served at time t therefore sees every commit made before t − maxAgeMs, which is the bound
 * the owner of the value promises (issue 15: a revoked key stops working on every process
 * within a second). Callers arriving while a read is in flight share it: one read per
 * window per process, however many requests arrive. A failed read is not kept.
 */
export class RecentRead<T> {
  private last: { at: number; value: Promise<T> } | undefined;

  constructor(
    private readonly maxAgeMs: number,
    private readonly read: () => Promise<T>,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<T> {
    const t = this.now();
    const last = this.last;
    if (last !== undefined && t - last.at <= this.maxAgeMs) return last.value;
    const value = this.read();
    const entry = { at: t, value };
    this.last = entry;
    value.catch(() => {
      if (this.last === entry) this.last = undefined;
    });
    return value;
  }

  /** The value changed through this process: the next `get` reads again. */
  forget(): void {
    this.last = undefined;
  }

  /** `write` may change the value: once it has settled (committed or not), `forget`. */
  async forgetAfter<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } finally {
      this.forget();
    }
  }
}
