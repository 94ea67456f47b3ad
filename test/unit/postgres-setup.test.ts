import { afterEach, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../engine/store/postgres/driver.js';
import { postgresFulltext } from '../../engine/store/postgres/fulltext.js';
import { LAYOUT_VERSION, setupDatabase } from '../../engine/store/postgres/setup.js';
import { createTestDatabase } from '../support/postgres-db.js';

type Db = Awaited<ReturnType<typeof createTestDatabase>>;
const open: { drivers: PostgresDriver[]; dbs: Db[] } = { drivers: [], dbs: [] };

async function fresh(pools = 1): Promise<PostgresDriver[]> {
  const db = await createTestDatabase('setup');
  open.dbs.push(db);
  const drivers = Array.from({ length: pools }, () => new PostgresDriver({ url: db.url, max: 2 }));
  open.drivers.push(...drivers);
  return drivers;
}

/** Everything setup creates that a second run could change: tables, columns, indexes, functions, meta rows. */
async function layout(d: PostgresDriver): Promise<unknown> {
  return d.snapshot(async (ex) => ({
    columns: await ex.all("SELECT table_name, column_name, data_type, collation_name FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"),
    indexes: await ex.all("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname"),
    triggers: await ex.all('SELECT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname'),
    meta: await ex.all('SELECT key, value FROM _ss_meta ORDER BY key'),
  }));
}

describe('PostgreSQL setup', () => {
  afterEach(async () => {
    await Promise.all(open.drivers.splice(0).map((d) => d.close()));
    await Promise.all(open.dbs.splice(0).map((d) => d.drop()));
  });

  it('sets up an empty database, and a second setup changes nothing', async () => {
    const [d] = await fresh();
    expect(await d!.transaction((tx) => setupDatabase(tx))).toEqual({ from: 0, to: LAYOUT_VERSION });
    await d!.transaction((tx) => postgresFulltext.ensure(tx, []));
    const first = await layout(d!);
    expect(await d!.transaction((tx) => setupDatabase(tx))).toEqual({ from: LAYOUT_VERSION, to: LAYOUT_VERSION });
    expect(await d!.transaction((tx) => postgresFulltext.ensure(tx, []))).toBe(false);
    expect(await layout(d!)).toEqual(first);
    const tables = await d!.all<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
    expect(tables.map((t) => t.tablename)).toEqual([
      '_ss_attributes', '_ss_documents', '_ss_files', '_ss_idempotency', '_ss_keys', '_ss_meta', '_ss_objects',
      '_ss_rate', '_ss_roles', '_ss_search', '_ss_search_layout', '_ss_source_history', '_ss_sources', '_ss_views',
    ]);
    expect(await d!.get("SELECT value FROM _ss_meta WHERE key = 'schema_version'")).toEqual({ value: String(LAYOUT_VERSION) });
  });

  it('three processes starting at once on an empty database all succeed, and set it up once', async () => {
    const drivers = await fresh(3);
    const results = await Promise.all(
      drivers.map((d) =>
        d.transaction(async (tx) => {
          const r = await setupDatabase(tx);
          await postgresFulltext.ensure(tx, []);
          return r;
        }),
      ),
    );
    // Exactly one found the database empty; the others found it set up.
    expect(results.filter((r) => r.from === 0)).toHaveLength(1);
    expect(results.every((r) => r.to === LAYOUT_VERSION)).toBe(true);
    expect(await drivers[0]!.get("SELECT count(*) AS n FROM _ss_meta WHERE key = 'schema_version'")).toEqual({ n: 1 });
  });

  it('brings an older layout forward in one transaction, keeping its rows', async () => {
    const [d] = await fresh();
    await d!.transaction((tx) => setupDatabase(tx, 1));
    await d!.run("INSERT INTO _ss_sources (id, version, declaration) VALUES ('crm', 3, '{}')");
    expect(await d!.get("SELECT to_regclass('_ss_rate') AS t")).toEqual({ t: null });
    expect(await d!.transaction((tx) => setupDatabase(tx))).toEqual({ from: 1, to: LAYOUT_VERSION });
    expect(await d!.get("SELECT to_regclass('_ss_rate') AS t")).toEqual({ t: '_ss_rate' });
    expect(await d!.get('SELECT id, version FROM _ss_sources')).toEqual({ id: 'crm', version: 3 });
  });

  it('refuses a database of a newer layout and leaves it untouched', async () => {
    const [d] = await fresh();
    await d!.transaction((tx) => setupDatabase(tx, 1));
    await d!.run("UPDATE _ss_meta SET value = '99' WHERE key = 'schema_version'");
    await expect(d!.transaction((tx) => setupDatabase(tx))).rejects.toThrow(/newer schemasync \(layout version 99 > /);
    expect(await d!.get("SELECT to_regclass('_ss_rate') AS t")).toEqual({ t: null });
  });
});
