import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { classifyPostgresError, PostgresDriver } from '../../engine/store/postgres/driver.js';
import { numberPlaceholders } from '../../engine/store/postgres/placeholders.js';
import { usePostgresDriver } from '../support/postgres-db.js';
import { startPostgres } from '../support/postgres.js';
import { queriesDuring } from '../support/round-trips.js';

describe('? → $n', () => {
  it('numbers placeholders and leaves literals, identifiers, comments and dollar quotes alone', () => {
    expect(numberPlaceholders('SELECT ? + ?, \'?\', "a?b", E\'\\\'?\', $$?$$, $t$ ? $t$ -- ?\n, ? /* ? */')).toBe(
      'SELECT $1 + $2, \'?\', "a?b", E\'\\\'?\', $$?$$, $t$ ? $t$ -- ?\n, $3 /* ? */',
    );
    expect(numberPlaceholders("WHERE a = 'it''s ?' AND b = ?")).toBe("WHERE a = 'it''s ?' AND b = $1");
  });
});

describe('PostgresDriver', () => {
  const t = usePostgresDriver('driver', 4);
  beforeAll(async () => {
    await t.driver.exec('CREATE TABLE counter (id int PRIMARY KEY, n bigint NOT NULL); INSERT INTO counter VALUES (1, 0)');
    await t.driver.exec('CREATE TABLE u (k text PRIMARY KEY, v integer)');
  });

  it('reads int8, numeric and booleans as numbers and json as text, like the SQLite driver', async () => {
    const row = await t.driver.get<Record<string, unknown>>(
      "SELECT count(*) AS c, sum(x)::numeric AS s, 9007199254740991::bigint AS big, true AS t, false AS f, '[1, {\"a\": 2}]'::jsonb AS j FROM (VALUES (1), (2)) v(x)",
    );
    expect(row).toEqual({ c: 2, s: 3, big: 9007199254740991, t: 1, f: 0, j: '[1, {"a": 2}]' });
  });

  it('commits a transaction whole, and a failure inside leaves nothing', async () => {
    await t.driver.transaction(async (tx) => {
      await tx.run('INSERT INTO u VALUES (?, ?)', ['a', 1]);
      await tx.run('INSERT INTO u VALUES (?, ?)', ['b', 2]);
    });
    await expect(
      t.driver.transaction(async (tx) => {
        await tx.run('INSERT INTO u VALUES (?, ?)', ['c', 3]);
        await tx.run('INSERT INTO u VALUES (?, ?)', ['a', 9]);
      }),
    ).rejects.toSatisfy((err) => t.driver.classify(err) === 'unique');
    expect(await t.driver.all('SELECT k, v FROM u ORDER BY k')).toEqual([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
    ]);
    const broken = t.driver.transaction(async (tx) => {
      await tx.run("UPDATE u SET v = 100 WHERE k = 'a'");
      throw new Error('the caller changed its mind');
    });
    await expect(broken).rejects.toThrow('changed its mind');
    expect(await t.driver.get('SELECT v FROM u WHERE k = ?', ['a'])).toEqual({ v: 1 });
  });

  it('loses no increment when concurrent read-then-write transactions collide (retried on serialization failure)', async () => {
    let attempts = 0;
    const increment = (): Promise<void> =>
      t.driver.transaction(async (tx) => {
        attempts++;
        const row = await tx.get<{ n: number }>('SELECT n FROM counter WHERE id = 1');
        // Read, think, write: the window in which another transaction commits the same read.
        await new Promise((r) => setTimeout(r, 5));
        await tx.run('UPDATE counter SET n = ? WHERE id = 1', [row!.n + 1]);
      });
    await Promise.all(Array.from({ length: 20 }, increment));
    expect(await t.driver.get('SELECT n FROM counter WHERE id = 1')).toEqual({ n: 20 });
    // Collisions happened and were retried (4 connections, 20 writers).
    expect(attempts).toBeGreaterThan(20);
  });

  it('runs a schema write again when DDL committed after its snapshot makes its DDL fail', async () => {
    await t.driver.exec("CREATE TABLE ddl_t (a text); CREATE TABLE ddl_meta (col text); INSERT INTO ddl_meta VALUES ('a')");
    let tries = 0;
    let snapshotTaken!: () => void;
    const taken = new Promise<void>((r) => (snapshotTaken = r));
    let renamed!: () => void;
    const done = new Promise<void>((r) => (renamed = r));
    // B plans from its snapshot (the column is "a"), but A renames it and commits first.
    const b = t.driver.transaction(async (tx) => {
      tries++;
      const col = (await tx.get<{ col: string }>('SELECT col FROM ddl_meta'))!.col;
      if (tries === 1) {
        snapshotTaken();
        await done;
      }
      await tx.exec(`ALTER TABLE ddl_t RENAME COLUMN "${col}" TO "b_${col}"`);
      await tx.run('UPDATE ddl_meta SET col = ?', [`b_${col}`]);
    });
    await taken;
    await t.driver.transaction(async (tx) => {
      await tx.exec('ALTER TABLE ddl_t RENAME COLUMN a TO x');
      await tx.run("UPDATE ddl_meta SET col = 'x'");
    });
    renamed();
    await b;
    expect(tries).toBe(2);
    expect(await t.driver.get('SELECT col FROM ddl_meta')).toEqual({ col: 'b_x' });
  });

  it('classifies a real serialization failure as busy when it is not retried', async () => {
    const a = new pg.Client({ connectionString: t.db.url });
    const b = new pg.Client({ connectionString: t.db.url });
    await a.connect();
    await b.connect();
    try {
      for (const c of [a, b]) await c.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
      await a.query('SELECT n FROM counter WHERE id = 1');
      await b.query('SELECT n FROM counter WHERE id = 1');
      await a.query('UPDATE counter SET n = n + 1 WHERE id = 1');
      await a.query('COMMIT');
      const err = await b.query('UPDATE counter SET n = n + 1 WHERE id = 1').catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe('40001');
      expect(t.driver.classify(err)).toBe('busy');
    } finally {
      await b.query('ROLLBACK').catch(() => {});
      await a.end();
      await b.end();
    }
  });

  it('inserts a batch as multi-row statements, and stops at a bad row with nothing written', async () => {
    await t.driver.exec('CREATE TABLE batch (id integer PRIMARY KEY, label text)');
    const row: (string | number)[] = [0, ''];
    function* rows(n: number): Generator<(string | number)[]> {
      // One reused array, as the store's producers may do.
      for (let i = 1; i <= n; i++) {
        row[0] = i;
        row[1] = `l${i}`;
        yield row;
      }
    }
    const out = await t.driver.transaction((tx) => tx.runBatch('INSERT INTO batch (id, label) VALUES (?, ?)', rows(2500)));
    expect(out.changes).toBe(2500);
    expect(await t.driver.get('SELECT count(*) AS n, count(DISTINCT label) AS d, max(id) AS m FROM batch')).toEqual({ n: 2500, d: 2500, m: 2500 });
    const dup = t.driver.transaction((tx) => tx.runBatch('INSERT INTO batch (id, label) VALUES (?, ?)', [[5000, 'new'], [1, 'dup']]));
    await expect(dup).rejects.toSatisfy((err) => t.driver.classify(err) === 'unique');
    expect(await t.driver.get('SELECT count(*) AS n FROM batch')).toEqual({ n: 2500 });
    // Not an INSERT … VALUES: one statement per row.
    const upd = await t.driver.transaction((tx) => tx.runBatch("UPDATE batch SET label = ? || 'x' WHERE id = ?", [['a', 1], ['b', 2], ['c', 99999]]));
    expect(upd.changes).toBe(2);
  });

  it('a snapshot sees one committed state across its reads', async () => {
    const seen = await t.driver.snapshot(async (ex) => {
      const before = await ex.get<{ n: number }>('SELECT count(*) AS n FROM u');
      await t.driver.run('INSERT INTO u VALUES (?, ?)', ['during', 0]);
      const after = await ex.get<{ n: number }>('SELECT count(*) AS n FROM u');
      return [before!.n, after!.n];
    });
    expect(seen[0]).toBe(seen[1]);
    expect(await t.driver.get('SELECT count(*) AS n FROM u')).toEqual({ n: seen[0]! + 1 });
  });

  it('a lone `serializable` statement runs SERIALIZABLE; lone statements of the main pool stay at the default level', async () => {
    await t.driver.exec('CREATE TABLE iso (level text)');
    await t.driver.serializable("INSERT INTO iso SELECT current_setting('transaction_isolation')", []);
    await t.driver.run("INSERT INTO iso SELECT current_setting('transaction_isolation')");
    expect(await t.driver.all('SELECT level FROM iso ORDER BY level')).toEqual([{ level: 'read committed' }, { level: 'serializable' }]);
  });

  it('a retried transaction waits for the writers of `waitFor` before its snapshot, and sees what they committed', async () => {
    await t.driver.exec('CREATE TABLE waited (x int)');
    const other = new pg.Client({ connectionString: t.db.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('INSERT INTO waited VALUES (1)');
      const seen: number[] = [];
      const retried = t.driver.transaction(
        async (tx) => {
          seen.push(Number((await tx.get<{ n: number }>('SELECT count(*) AS n FROM waited'))!.n));
          // The first try fails as a serialization failure would; the retry locks first.
          if (seen.length === 1) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
        },
        { waitFor: () => ['waited'] },
      );
      await new Promise((r) => setTimeout(r, 300));
      await other.query('COMMIT');
      await retried;
      // Without the lock the retry would have read at once, before the insert committed.
      expect(seen).toEqual([0, 1]);
    } finally {
      await other.end();
    }
  });

  it('classifies a refused connection and a wrong password as unavailable', async () => {
    const refused = new PostgresDriver({ url: 'postgres://x:y@127.0.0.1:1/none', max: 1 });
    const e1 = await refused.get('SELECT 1').catch((e: unknown) => e);
    expect(refused.classify(e1)).toBe('unavailable');
    await refused.close();
    const u = new URL(inject('postgresUrl'));
    u.password = 'wrong';
    const badLogin = new PostgresDriver({ url: u.toString(), max: 1 });
    const e2 = await badLogin.get('SELECT 1').catch((e: unknown) => e);
    expect((e2 as { code?: string }).code).toBe('28P01');
    expect(badLogin.classify(e2)).toBe('unavailable');
    await badLogin.close();
    expect(classifyPostgresError(new Error('boom'))).toBe('other');
    expect(classifyPostgresError(Object.assign(new Error('syntax'), { code: '42601' }))).toBe('other');
  });
});

describe('PostgresDriver when the database goes away', () => {
  it('keeps the process up, fails calls as unavailable, and recovers when the database is back', async () => {
    const cluster = await startPostgres();
    const idleErrors: Error[] = [];
    const driver = new PostgresDriver({ url: cluster.url, max: 3, onIdleError: (e) => idleErrors.push(e) });
    try {
      // Connections open and idle in the pool, one checked out in a transaction.
      await Promise.all([driver.get('SELECT 1'), driver.get('SELECT 2'), driver.get('SELECT 3')]);
      let release!: () => void;
      const held = driver.transaction(async (tx) => {
        await tx.get('SELECT 1');
        await new Promise<void>((r) => (release = r));
        return tx.get('SELECT 2');
      });
      await new Promise((r) => setTimeout(r, 50));
      cluster.stop();
      release();
      const heldErr = await held.catch((e: unknown) => e);
      expect(driver.classify(heldErr)).toBe('unavailable');
      const downErr = await driver.get('SELECT 1').catch((e: unknown) => e);
      expect(driver.classify(downErr)).toBe('unavailable');
      cluster.start();
      expect(await driver.get<{ x: number }>('SELECT 7 AS x')).toEqual({ x: 7 });
      expect(await driver.transaction((tx) => tx.get<{ x: number }>('SELECT 8 AS x'))).toEqual({ x: 8 });
      expect(idleErrors.length).toBeGreaterThan(0);
    } finally {
      await driver.close().catch(() => {});
      cluster.destroy();
    }
  });
});

describe('PostgresDriver: the opening read rides on BEGIN', () => {
  const t = usePostgresDriver('opening', 2);
  const OPENING = "SELECT value FROM meta WHERE key = 'token'";
  let driver: PostgresDriver;
  beforeAll(async () => {
    await t.driver.exec("CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL); INSERT INTO meta VALUES ('token', '1')");
    driver = new PostgresDriver({ url: t.db.url, max: 2, opening: OPENING });
  });
  afterAll(() => driver.close());

  it('a transaction that starts with the opening read costs one round trip less: BEGIN and the read go together', async () => {
    const sent = await queriesDuring(() =>
      driver.transaction(async (tx) => {
        expect(await tx.get(OPENING)).toEqual({ value: '1' });
        await tx.run("UPDATE meta SET value = value WHERE key = 'token'");
      }),
    );
    expect(sent).toHaveLength(3);
    expect(sent[0]).toBe(`BEGIN ISOLATION LEVEL SERIALIZABLE; ${OPENING}`);
    expect(sent.at(-1)).toBe('COMMIT');
    const read = await queriesDuring(() => driver.snapshot((ex) => ex.get(OPENING)));
    expect(read).toEqual([`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${OPENING}`, 'COMMIT']);
  });

  it("answers from the transaction's own snapshot, once: a commit made after BEGIN is not seen, and a second call reads again", async () => {
    const seen = await driver.snapshot(async (ex) => {
      // Another connection moves the token after this transaction began.
      await t.driver.run("UPDATE meta SET value = '2' WHERE key = 'token'");
      const first = await ex.get<{ value: string }>(OPENING);
      const again = await queriesDuring(() => ex.get(OPENING));
      return { first: first?.value, againSent: again.length };
    });
    expect(seen).toEqual({ first: '1', againSent: 1 });
    expect(await driver.snapshot((ex) => ex.get(OPENING))).toEqual({ value: '2' });
  });

  it('an opening read that fails leaves the connection clean for the next transaction (no aborted transaction left open)', async () => {
    await t.driver.exec('CREATE TABLE flag (x int)');
    // Division by zero while `flag` is empty: BEGIN has run, the read after it fails.
    const picky = new PostgresDriver({ url: t.db.url, max: 1, opening: 'SELECT 1 / (SELECT count(*) FROM flag)::int AS one' });
    try {
      await expect(picky.transaction((tx) => tx.get('SELECT 1 AS x'))).rejects.toMatchObject({ code: '22012' });
      await t.driver.run('INSERT INTO flag VALUES (1)');
      // The pool's one connection again: it must not still be inside the failed transaction.
      expect(await picky.transaction((tx) => tx.get('SELECT count(*) AS n FROM flag'))).toEqual({ n: 1 });
      expect(await picky.get('SELECT count(*) AS n FROM flag')).toEqual({ n: 1 });
    } finally {
      await picky.close();
    }
  });

  it('on a database without the table yet (the setup transaction on first start), begins without the read', async () => {
    const fresh = new PostgresDriver({ url: t.db.url, max: 1, opening: 'SELECT value FROM not_yet WHERE key = 1' });
    try {
      await fresh.transaction(async (tx) => {
        await tx.exec('CREATE TABLE not_yet (key int PRIMARY KEY, value text)');
        await tx.run("INSERT INTO not_yet VALUES (1, 'made')");
      });
      expect(await fresh.transaction((tx) => tx.get('SELECT value FROM not_yet WHERE key = 1'))).toEqual({ value: 'made' });
    } finally {
      await fresh.exec('DROP TABLE not_yet');
      await fresh.close();
    }
  });
});
