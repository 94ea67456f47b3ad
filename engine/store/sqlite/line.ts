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
  /** Connections open on it: the line is forgotten when the last one closes. */
  users: number;
  readonly key: string;
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
let memoryDatabases = 0;

/** The line of a file, for a connection opening it; `releaseLine` when it closes. */
export function lineOf(path: string): Line {
  // Each ':memory:' connection is a database of its own, so it gets a line of its own.
  const key = path === ':memory:' ? `:memory:${++memoryDatabases}` : resolve(path);
  let line = lines.get(key);
  if (!line) {
    line = { queue: Promise.resolve(), pending: 0, open: null, committedThisTurn: false, quietUntil: 0, users: 0, key };
    lines.set(key, line);
  }
  line.users++;
  return line;
}

/**
 * A connection closed (after its queue drained). A process that opens and closes many
 * stores (tests, `dev` restarting on a new data folder) keeps no line of a closed file.
 */
export function releaseLine(line: Line): void {
  if (--line.users === 0 && lines.get(line.key) === line) lines.delete(line.key);
}

/** Lines held now (tests check closed stores leave none behind). */
export function openLines(): number {
  return lines.size;
}
