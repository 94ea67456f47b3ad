import type { Statement } from 'better-sqlite3';
import type { Executor } from '../port.js';
import type { Db } from './database.js';
import type { Group, Line, Member } from './line.js';

/** After a turn's wait for joiners that nobody used, no waiting for this long (ms). */
const QUIET_MS = 10;

/** What a group's run needs of its driver (driver.ts): the connection, its statements, its line. */
export interface GroupHost {
  readonly db: Db;
  readonly sql: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', Statement>;
  readonly direct: Executor;
  readonly line: Line;
  /** A COMMIT landed (the driver counts it and tells the checkpointer). */
  committed(): void;
}

/**
 * How the writes of one group (driver.ts `transaction`, group commit) run: one alone, as its
 * own transaction; several in one transaction, first without savepoints (`optimistic`) and,
 * if any of them fails, all again each in its own savepoint (`careful`).
 *
 * Why not savepoints from the start: FTS5 writes its pending terms out as a new index segment
 * at every SAVEPOINT once it is part of the transaction (its xSavepoint flushes, so that a
 * ROLLBACK TO can undo them), so a group of k creates wrote k segments and k flushes instead of
 * one at COMMIT, which is the very cost a group is there to share (1-row creates with the
 * search index, 8 to a transaction: ~38 µs a create with a savepoint each, ~27 without). Most
 * groups have no failing member; one that has is rolled back whole and runs again the careful
 * way, whose answers are the only ones ever given. A body may run more than once (port.ts
 * Driver.transaction): the optimistic run is discarded, never half kept.
 */
export class GroupRunner {
  constructor(private readonly host: GroupHost) {}

  /** One turn of the queue: the members, alone or together; settles each, never throws. */
  async run(group: Group): Promise<void> {
    if (group.members.length === 1 && !group.collecting) {
      const only = group.members[0]!;
      try {
        only.resolve(await this.alone(only.fn));
      } catch (err) {
        only.reject(err);
      }
      return;
    }
    let left = await this.optimistic(group);
    // Each careful round settles at least one member (see careful): this ends.
    while (left.length > 0) left = await this.careful({ driver: group.driver, members: left, collecting: false });
  }

  private async alone<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    const { sql, db } = this.host;
    sql.begin.run();
    try {
      const out = await fn(this.host.direct);
      sql.commit.run();
      this.host.committed();
      return out;
    } catch (err) {
      // A failed COMMIT or a statement error may have ended the transaction already.
      if (db.inTransaction) sql.rollback.run();
      throw err;
    }
  }

  /**
   * Members in one transaction, one after the other, with no savepoint. All succeed: one
   * COMMIT, then each is answered (a failed COMMIT rejects them all: nothing landed). One
   * fails: the transaction is rolled back whole, nobody is answered, and every member (those
   * that ran, the failing one, those not yet run) is returned to run the careful way — but a
   * failure that ended the transaction itself is answered at once, as `careful` answers it.
   */
  private async optimistic(group: Group): Promise<Member[]> {
    const { sql, db, direct } = this.host;
    const { members } = group;
    const values: unknown[] = [];
    if (!this.begin(group)) return [];
    for (let i = 0; ; i++) {
      // A collecting group runs whoever joined while it waited, then waits no more.
      if (i === members.length && group.collecting) await this.endOfTurn(group, i);
      if (i === members.length) break;
      try {
        values.push(await members[i]!.fn(direct));
      } catch (err) {
        this.closeGroup(group);
        // The failure ended the transaction under it (careful's case too): it is answered, the
        // others run again.
        if (!db.inTransaction) {
          members[i]!.reject(err);
          return members.filter((_m, j) => j !== i);
        }
        try {
          sql.rollback.run();
        } catch (undo) {
          for (const m of members) m.reject(undo);
          return [];
        }
        return members;
      }
    }
    try {
      sql.commit.run();
      this.host.committed();
    } catch (err) {
      if (db.inTransaction) sql.rollback.run();
      for (const m of members) m.reject(err);
      return [];
    }
    members.forEach((m, i) => m.resolve(values[i]));
    return [];
  }

  /**
   * Members in one transaction, each in a savepoint: a body that throws is rolled back to
   * its savepoint alone and gets its own error; the others go on. Nobody is answered before
   * the COMMIT; a failed COMMIT rejects every member that had succeeded (nothing landed).
   * If a body's failure ended the whole transaction (SQLite does so on SQLITE_FULL, IOERR,
   * NOMEM, some BUSY), the members that had succeeded lost their writes through no fault of
   * their own: they are returned to run again in a fresh transaction (a transaction body may
   * run more than once, engine/store/port.ts Driver.transaction); the failing one is settled.
   */
  private async careful(group: Group): Promise<Member[]> {
    const { sql, db, direct } = this.host;
    const { members } = group;
    const ok: { member: Member; value: unknown }[] = [];
    const failed: { member: Member; err: unknown }[] = [];
    const settle = (commitError?: unknown): void => {
      for (const f of failed) f.member.reject(f.err);
      for (const o of ok) commitError === undefined ? o.member.resolve(o.value) : o.member.reject(commitError);
    };
    if (!this.begin(group)) return [];
    for (let i = 0; i < members.length; i++) {
      const member = members[i]!;
      try {
        sql.savepoint.run();
        const value = await member.fn(direct);
        sql.release.run();
        ok.push({ member, value });
      } catch (err) {
        failed.push({ member, err });
        if (!db.inTransaction) {
          for (const f of failed) f.member.reject(f.err);
          return [...ok.map((o) => o.member), ...members.slice(i + 1)];
        }
        try {
          sql.rollbackTo.run();
          sql.release.run();
        } catch (undo) {
          // The savepoint could not be undone: nothing of this transaction may land.
          if (db.inTransaction) sql.rollback.run();
          for (const m of members.slice(i + 1)) failed.push({ member: m, err: undo });
          settle(undo);
          return [];
        }
      }
    }
    try {
      sql.commit.run();
      this.host.committed();
    } catch (err) {
      if (db.inTransaction) sql.rollback.run();
      settle(err);
      return [];
    }
    settle();
    return [];
  }

  /** BEGIN for a group; when it fails, every member gets its error (false). */
  private begin(group: Group): boolean {
    try {
      this.host.sql.begin.run();
      return true;
    } catch (err) {
      this.closeGroup(group);
      for (const m of group.members) m.reject(err);
      return false;
    }
  }

  /** A collecting group waits for the end of this turn, then takes no one new. */
  private async endOfTurn(group: Group, ran: number): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.closeGroup(group);
    // Nobody joined and nothing queued behind: the wait only delayed this write.
    if (group.members.length === ran && this.host.line.pending <= 1) this.host.line.quietUntil = performance.now() + QUIET_MS;
  }

  private closeGroup(group: Group): void {
    group.collecting = false;
    if (this.host.line.open === group) this.host.line.open = null;
  }
}
