import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Parse workers (parse-worker.ts) for load.ts. A worker spends its first ~50 ms loading
 * yaml; `schemasync validate` starts one before it loads the rest of the engine and reads
 * schemasync.yaml, so that start-up overlaps work the main thread does anyway. This module
 * imports nothing heavy for that reason.
 */
export const WORKER = new URL('./parse-worker.js', import.meta.url);

let early: Worker | undefined;

/** Whether workers can run here: a built tree (not the TypeScript sources) on more than one core. */
export function workersAvailable(): boolean {
  return availableParallelism() >= 2 && existsSync(fileURLToPath(WORKER));
}

/** Start one idle parse worker now; load.ts hands it files, or stops it if none are worth a worker. */
export function startParseWorker(): void {
  if (early || !workersAvailable()) return;
  try {
    const worker = new Worker(WORKER);
    // Unused (a small project) it must not keep the process alive nor fail it; one that
    // dies before it is used is forgotten, so parseWorker() starts a fresh one.
    worker.unref();
    const forget = (): void => {
      if (early === worker) early = undefined;
    };
    worker.on('error', forget).on('exit', forget);
    early = worker;
  } catch {
    early = undefined;
  }
}

/** A worker parsing `files`: the early one if started, else a new one. */
export function parseWorker(files: string[]): Worker {
  const worker = early ?? new Worker(WORKER);
  early = undefined;
  worker.ref();
  worker.postMessage({ files });
  return worker;
}

/** Stop the early worker when the files are parsed in-thread. */
export function stopIdleWorker(): void {
  void early?.terminate();
  early = undefined;
}
