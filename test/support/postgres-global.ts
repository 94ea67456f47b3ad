import type { TestProject } from 'vitest/node';
import { startPostgres, type PostgresCluster } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test cluster's superuser URL (maintenance database); each file makes its own database. */
    postgresUrl: string;
  }
}

/**
 * vitest globalSetup: ONE PostgreSQL cluster for the whole run (postgres.ts), its URL
 * provided to every test file, stopped and removed when the run ends — the teardown vitest
 * calls after a failing run too, and on a signal that stops the run.
 */
/**
 * Both vitest projects (SQLite and PostgreSQL, vitest.config.ts) name this setup; they share
 * one cluster, kept on globalThis because each project may load this module afresh. The last
 * project's teardown stops it.
 */
interface Shared {
  cluster: Promise<PostgresCluster>;
  users: number;
  /** The first setup's teardown: stops the cluster and removes its signal handlers. */
  release?: () => void;
}
const SHARED = Symbol.for('schemasync.test.postgres');
const holder = globalThis as { [SHARED]?: Shared };

export default async function setup(project: TestProject): Promise<() => void> {
  const existing = holder[SHARED];
  if (existing) {
    existing.users++;
    project.provide('postgresUrl', (await existing.cluster).url);
    return () => {
      if (--existing.users === 0) existing.release?.();
    };
  }
  const started = performance.now();
  const shared: Shared = { cluster: startPostgres(), users: 1 };
  holder[SHARED] = shared;
  let cluster: PostgresCluster | undefined;
  cluster = await shared.cluster;
  const { initdbMs, startMs } = cluster.timings;
  console.log(
    `PostgreSQL test cluster on 127.0.0.1:${cluster.port} ready in ${Math.round(performance.now() - started)} ms ` +
      `(initdb ${Math.round(initdbMs)} ms, start ${Math.round(startMs)} ms)`,
  );
  project.provide('postgresUrl', cluster.url);
  const stop = (): void => {
    const c = cluster;
    cluster = undefined;
    c?.destroy();
  };
  // A run cut short by a signal still stops the server (pg_ctl starts it detached).
  const onSignal = (signal: NodeJS.Signals): void => {
    stop();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', stop);
  shared.release = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', stop);
    stop();
  };
  return () => {
    if (--shared.users === 0) shared.release?.();
  };
}
