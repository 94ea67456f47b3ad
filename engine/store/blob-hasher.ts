import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/**
 * SHA-256 of an upload computed on a worker thread while the main thread parses the
 * multipart body and writes to disk: hashing is about a third of the CPU an upload costs,
 * and doing it beside the I/O rather than in series keeps uploads near raw disk-copy speed
 * (issue 5 bench target ≥ 0.7).
 *
 * Memory stays bounded: bytes are copied into a few fixed 1 MiB slabs that travel to the
 * worker and back (transferred, never cloned), so at most SLABS MiB per upload are in
 * flight, and an upload waits (backpressure) while all of its slabs are in the worker.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hashes = new Map();
parentPort.on('message', (m) => {
  if (m.op === 'update') {
    let h = hashes.get(m.id);
    if (!h) hashes.set(m.id, (h = createHash('sha256')));
    h.update(new Uint8Array(m.buf, 0, m.len));
    parentPort.postMessage({ id: m.id, buf: m.buf }, [m.buf]);
  } else if (m.op === 'digest') {
    const h = hashes.get(m.id) || createHash('sha256');
    hashes.delete(m.id);
    parentPort.postMessage({ id: m.id, hex: h.digest('hex') });
  } else if (m.op === 'drop') {
    hashes.delete(m.id);
  }
});
`;

const SLAB = 1024 * 1024;
const SLABS = 4;

interface Session {
  /** Slabs back from the worker, ready to fill. */
  free: ArrayBuffer[];
  /** Slabs allocated so far (≤ SLABS). */
  allocated: number;
  current: Uint8Array | undefined;
  filled: number;
  waiter: (() => void) | undefined;
  digest?: { resolve: (hex: string) => void; reject: (err: Error) => void };
}

export interface HashSession {
  /** Queue bytes; returns a promise when the caller must wait for a slab to come back. */
  update(chunk: Uint8Array): Promise<void> | undefined;
  digest(): Promise<string>;
  drop(): void;
}

export class WorkerHasher {
  private worker: Worker | undefined;
  private readonly sessions = new Map<string, Session>();

  private get w(): Worker {
    if (!this.worker) {
      const worker = new Worker(WORKER_SOURCE, { eval: true });
      worker.on('message', (m: { id: string; buf?: ArrayBuffer; hex?: string }) => this.onMessage(m));
      worker.on('error', (err) => this.failAll(err));
      worker.on('exit', () => {
        this.worker = undefined;
      });
      // Never keep the process alive for an idle hasher (ref'd only while a session runs).
      worker.unref();
      this.worker = worker;
    }
    return this.worker;
  }

  start(): HashSession {
    const id = randomUUID();
    const s: Session = { free: [], allocated: 0, current: undefined, filled: 0, waiter: undefined };
    this.sessions.set(id, s);
    const worker = this.w;
    if (this.sessions.size === 1) worker.ref();
    const release = () => {
      if (this.sessions.delete(id) && this.sessions.size === 0) worker.unref();
    };
    const send = () => {
      if (!s.current || s.filled === 0) return;
      const buf = s.current.buffer as ArrayBuffer;
      worker.postMessage({ op: 'update', id, buf, len: s.filled }, [buf]);
      s.current = undefined;
      s.filled = 0;
    };
    /** A slab to fill, or false when all are in the worker. */
    const take = (): boolean => {
      if (s.current) return true;
      const buf = s.free.pop() ?? (s.allocated < SLABS ? (s.allocated++, new ArrayBuffer(SLAB)) : undefined);
      if (!buf) return false;
      s.current = new Uint8Array(buf);
      return true;
    };
    const fill = (chunk: Uint8Array, from: number): Promise<void> | undefined => {
      let off = from;
      while (off < chunk.length) {
        if (!take()) {
          // Resume once a slab returns; the rest of this chunk is copied then.
          return new Promise<void>((resolve) => {
            s.waiter = () => {
              s.waiter = undefined;
              const more = fill(chunk, off);
              if (more) void more.then(resolve);
              else resolve();
            };
          });
        }
        const n = Math.min(chunk.length - off, SLAB - s.filled);
        s.current!.set(chunk.subarray(off, off + n), s.filled);
        s.filled += n;
        off += n;
        if (s.filled === SLAB) send();
      }
      return undefined;
    };
    return {
      update: (chunk) => fill(chunk, 0),
      digest: () =>
        new Promise<string>((resolve, reject) => {
          s.digest = {
            resolve: (hex) => {
              release();
              resolve(hex);
            },
            reject: (err) => {
              release();
              reject(err);
            },
          };
          send();
          worker.postMessage({ op: 'digest', id });
        }),
      drop: () => {
        worker.postMessage({ op: 'drop', id });
        release();
      },
    };
  }

  private onMessage(m: { id: string; buf?: ArrayBuffer; hex?: string }): void {
    const s = this.sessions.get(m.id);
    if (!s) return;
    if (m.buf) {
      s.free.push(m.buf);
      s.waiter?.();
    }
    if (m.hex !== undefined) s.digest?.resolve(m.hex);
  }

  private failAll(err: Error): void {
    // A crashed worker is a bug; fail every waiting upload rather than hang it.
    for (const s of this.sessions.values()) s.digest?.reject(err);
    this.sessions.clear();
  }
}
