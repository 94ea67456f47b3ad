import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { openStore } from '../../engine/store/index.js';
import type { Actor, Store } from '../../engine/store/types.js';

/**
 * Several processes on one data folder (two `schemasync serve` on one --data, or serve beside
 * a CLI): each has its own connection to the one SQLite file. A write that reads before it
 * writes must not fail with "database is locked" because the other process writes too; it
 * waits for the lock (busy_timeout) instead. The other processes run the built store
 * (dist/, as the crash test in test/api/sources-sync.test.ts does): run `npm run build` first.
 */
const STORE_URL = new URL('../../dist/engine/store/index.js', import.meta.url);
const actor: Actor = { keyId: 'k1', role: 'owner', scopes: null };
const RUNTIME = { kind: 'runtime' } as const;

let dir: string;
let path: string;
let store: Store;
let counterId: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  if (!existsSync(fileURLToPath(STORE_URL))) throw new Error('dist/ is missing: run `npm run build` before this test');
  dir = mkdtempSync(join(tmpdir(), 'ss-concurrency-'));
  path = join(dir, 'schemasync.db');
  store = openStore({ path, filesDir: false });
  await store.createObject({ name: 'counter', attributes: [{ name: 'n', type: 'integer', required: true }] }, RUNTIME);
  await store.createObject({ name: 'item', attributes: [{ name: 'who', type: 'text' }, { name: 'i', type: 'integer' }] }, RUNTIME);
  counterId = (await store.createRecord('counter', { n: 0 }, actor)).id;
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Counted over a connection of its own: the async store exposes no SQL. */
const itemCount = (): number => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT COUNT(*) FROM "r_item"').pluck().get() as number;
  } finally {
    db.close();
  }
};

/** A node process running `source` (an ES module; STORE_URL, DB and COUNTER are defined for it). */
function child(name: string, source: string, args: string[] = []) {
  const script = join(dir, `${name}.mjs`);
  writeFileSync(
    script,
    `import { openStore } from ${JSON.stringify(STORE_URL.href)};
const DB = ${JSON.stringify(path)};
const COUNTER = ${JSON.stringify(counterId)};
const actor = { keyId: ${JSON.stringify(name)}, role: 'owner', scopes: null };
const lines = [];
let wake;
let stdinBuf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { stdinBuf += c; let i; while ((i = stdinBuf.indexOf('\\n')) >= 0) { lines.push(stdinBuf.slice(0, i)); stdinBuf = stdinBuf.slice(i + 1); wake?.(); } });
const nextLine = async () => { while (lines.length === 0) await new Promise((r) => (wake = r)); return lines.shift(); };
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
try {
${source}
  process.exit(0);
} catch (err) {
  console.log('ERROR ' + JSON.stringify({ code: err.code, message: String(err.message) }));
  process.exit(1);
}
`,
  );
  const proc = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(proc);
  let out = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (out.includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  proc.stdout!.setEncoding('utf8').on('data', (c: string) => ((out += c), check()));
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return {
    send: (line: string) => proc.stdin!.write(`${line}\n`),
    /** Resolves when the child has printed `text`; rejects with its output if it exits first. */
    printed: (text: string) =>
      Promise.race([
        new Promise<void>((resolve) => {
          waiters.push({ text, resolve });
          check();
        }),
        exited.then((code) => {
          if (!out.includes(text)) throw new Error(`${name} exited (${code}) before printing "${text}":\n${out}`);
        }),
      ]),
    exit: async () => ({ code: await exited, out }),
  };
}

describe('store: several processes writing to one file', () => {
  it('read-then-write transactions from two processes at once all land (no "database is locked")', async () => {
    const ROUNDS = 300;
    // Each round: increment the counter with if-match (updateRecord and bulkUpdate in turn,
    // both read the row before writing it), retrying on a version conflict; then create a record.
    const worker = (name: string) =>
      child(
        name,
        `  const store = openStore({ path: DB, filesDir: false });
  console.log('ready');
  await nextLine();
  let conflicts = 0;
  for (let i = 0; i < ${ROUNDS}; i++) {
    for (;;) {
      const cur = await store.getRecord('counter', COUNTER);
      const values = { n: cur.values.n + 1 };
      try {
        if (i % 2 === 0) await store.updateRecord('counter', COUNTER, values, cur.version, actor);
        else await store.bulkUpdate('counter', [{ id: COUNTER, version: cur.version, values }], actor);
        break;
      } catch (err) {
        if (err.code !== 'SCHEMA_CONFLICT') throw err;
        conflicts++;
      }
    }
    await store.createRecord('item', { who: actor.keyId, i }, actor);
  }
  await store.close();
  console.log('done ' + conflicts);`,
      );
    const a = worker('a');
    const b = worker('b');
    await Promise.all([a.printed('ready'), b.printed('ready')]);
    a.send('go');
    b.send('go');
    for (const w of [a, b]) {
      const { code, out } = await w.exit();
      expect(out).not.toContain('ERROR');
      expect(code, out).toBe(0);
    }
    const counter = await store.getRecord('counter', counterId);
    expect(counter.values['n']).toBe(2 * ROUNDS);
    expect(counter.version).toBe(2 * ROUNDS + 1);
    expect(itemCount()).toBe(2 * ROUNDS);
  });

  it('opening the store and a read-then-write wait while another process holds a write transaction', async () => {
    // The holder takes the write lock (BEGIN IMMEDIATE), writes, says so, keeps the lock a
    // moment (well under the 5 s busy_timeout) and commits; twice.
    const holder = child(
      'holder',
      `  const store = openStore({ path: DB, filesDir: false });
  await store.listObjects();
  console.log('ready');
  for (let round = 1; round <= 2; round++) {
    await nextLine();
    // One write transaction (BEGIN IMMEDIATE … COMMIT): the sleep blocks the thread inside it.
    await store.transaction(async (tx) => {
      await tx.createRecord('item', { who: 'holder', i: round }, actor);
      console.log('held ' + round);
      sleep(300);
    });
    console.log('released ' + round);
  }
  await store.close();`,
    );
    await holder.printed('ready');

    holder.send('go');
    await holder.printed('held 1');
    // The store's own schema-version write at open waits for the lock.
    const second = openStore({ path, filesDir: false });
    try {
      holder.send('go');
      await holder.printed('held 2');
      // A read-then-write: updateRecord reads the row (its version) inside its transaction.
      const r = await second.updateRecord('counter', counterId, { n: 1 }, 1, actor);
      expect(r.version).toBe(2);
    } finally {
      await second.close();
    }
    const { code, out } = await holder.exit();
    expect(code, out).toBe(0);
    expect((await store.getRecord('counter', counterId)).values['n']).toBe(1);
    expect(itemCount()).toBe(2);
  });
});
