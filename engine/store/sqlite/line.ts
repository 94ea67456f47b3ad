import { resolve } from 'node:path';
import type { Executor } from '../port.js';

/**
 * The queue of one database file in this process, shared by every connection to it. A
 * second connection in the same process (a test's second store, a CLI command run inside a
 * server's process) must wait for a transaction of the first by awaiting, not in SQLite's
 * busy wait: that wait blocks the thread, so the first transaction, paused at an await,
 * could never reach its COMMIT (a deadlock until busy_timeout, then "database is locked").
 * Other processes are kept out by the file lock (BEGIN IMMEDIATE, busy_timeout).
 */
export interface Line {
  queue: Promise<unknown>;
  /** Calls queued or running (a transaction counts until it ends). */
  pending: number;
  /** The group another grouped write may join: queued and not started, or collecting. */
  open: Group | null;
  /** A COMMIT ran in this turn of the event loop (cleared by setImmediate). */
  committedThisTurn: boolean;
  /** performance.now() before which no group collects (a wait nobody used). */
  quietUntil: number;
}

/** A write waiting to run in a group (SqliteDriver.transaction). */
export interface Member {
  fn: (tx: Executor) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export interface Group {
  /** Members run on this connection's `direct` executor, so only its own writes join. */
  driver: object;
  members: Member[];
  /** Running, and taking joiners until the end of this turn of the event loop. */
  collecting: boolean;
}

export function join<T>(group: Group, fn: (tx: Executor) => Promise<T>): Promise<T> {
  return new Promise<T>((settle, fail) => void group.members.push({ fn, resolve: settle as (v: unknown) => void, reject: fail }));
}

const lines = new Map<string, Line>();

export function lineOf(path: string): Line {
  const key = path === ':memory:' ? `:memory:${lines.size}` : resolve(path);
  let line = lines.get(key);
  if (!line) {
    line = { queue: Promise.resolve(), pending: 0, open: null, committedThisTurn: false, quietUntil: 0 };
    lines.set(key, line);
  }
  return line;
}
