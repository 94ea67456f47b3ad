import type { Executor } from '../port.js';

/**
 * The `_ss_` tables in PostgreSQL (the layout of engine/store/sqlite/database.ts, files.ts
 * and history.ts, in PostgreSQL's types), set up on the first start against an empty
 * database and brought forward from an older layout (contract.md §8: "An empty database is
 * set up on first start; a database written by an older version is brought forward in one
 * transaction").
 *
 * Types: text columns are `text COLLATE "C"` (byte order, as SQLite compares and sorts, so
 * keyset cursors over names and times agree); integers are bigint (the driver reads int8 as
 * a JS number); flags stay integers 0/1 as the shared row readers expect.
 *
 * Layout versions: `_ss_meta` 'schema_version' holds the number of LAYOUT steps applied.
 * Each step is applied once, in order, inside the caller's transaction (the store's first
 * transaction on open), so a database moves from any older version to the current one
 * whole or not at all. A database of a newer version is refused, never written.
 *
 * Concurrency: several processes may start on one empty database at once (contract §8 "any
 * number of serve processes"). Each takes one transaction-scoped advisory lock first, so the
 * setups run one after another; a later one whose snapshot predates the first's commit
 * fails with a serialization failure on its first write and is retried whole by the driver,
 * then finds the current version and does nothing.
 */

const T = 'text COLLATE "C"';

/** Views and roles: a declaration (JSON text) by name, with its owner. */
const owned = (table: string): string => `CREATE TABLE IF NOT EXISTS ${table} (
  name ${T} PRIMARY KEY,
  decl ${T} NOT NULL,
  owner_kind ${T} NOT NULL,
  owner_id ${T},
  created_at ${T} NOT NULL,
  updated_at ${T} NOT NULL
);`;

/** Step n brings layout n-1 to n. Append only; never edit a released step. */
const LAYOUT: readonly string[] = [
  // 1: the store's meta layer
  `
CREATE TABLE IF NOT EXISTS _ss_objects (
  id ${T} PRIMARY KEY,
  name ${T} NOT NULL UNIQUE,
  label ${T},
  description ${T},
  owner_kind ${T} NOT NULL,
  owner_id ${T},
  protected bigint NOT NULL DEFAULT 0,
  position bigint NOT NULL,
  created_at ${T} NOT NULL,
  updated_at ${T} NOT NULL
);
CREATE TABLE IF NOT EXISTS _ss_attributes (
  id ${T} PRIMARY KEY,
  object_id ${T} NOT NULL REFERENCES _ss_objects(id) ON DELETE CASCADE,
  name ${T} NOT NULL,
  spec ${T} NOT NULL,
  position bigint NOT NULL,
  protected bigint NOT NULL DEFAULT 0,
  system bigint NOT NULL DEFAULT 0,
  owner_kind ${T} NOT NULL,
  owner_id ${T},
  created_at ${T} NOT NULL,
  updated_at ${T} NOT NULL,
  UNIQUE (object_id, name)
);
${owned('_ss_views')}
${owned('_ss_roles')}
CREATE TABLE IF NOT EXISTS _ss_sources (
  id ${T} PRIMARY KEY,
  version bigint NOT NULL,
  applied_at ${T},
  declaration ${T} NOT NULL
);
CREATE TABLE IF NOT EXISTS _ss_source_history (
  source_id ${T} NOT NULL,
  version bigint NOT NULL,
  applied_at ${T} NOT NULL,
  plan_hash ${T} NOT NULL,
  key_id ${T},
  key_name ${T},
  creates bigint NOT NULL,
  changes bigint NOT NULL,
  drops bigint NOT NULL,
  destructive ${T} NOT NULL,
  PRIMARY KEY (source_id, version)
);
CREATE TABLE IF NOT EXISTS _ss_keys (
  id ${T} PRIMARY KEY,
  name ${T} NOT NULL,
  role ${T} NOT NULL,
  scopes ${T},
  hash ${T} NOT NULL,
  created_at ${T} NOT NULL,
  revoked_at ${T},
  last_used_at ${T}
);
CREATE TABLE IF NOT EXISTS _ss_idempotency (
  scope ${T} NOT NULL,
  key ${T} NOT NULL,
  body_hash ${T} NOT NULL,
  status bigint NOT NULL,
  body ${T} NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS _ss_idempotency_expiry ON _ss_idempotency(expires_at);
CREATE TABLE IF NOT EXISTS _ss_files (
  id ${T} PRIMARY KEY,
  name ${T} NOT NULL,
  mime_type ${T} NOT NULL,
  size bigint NOT NULL,
  sha256 ${T} NOT NULL,
  uploaded_by ${T},
  created_at ${T} NOT NULL
);
CREATE INDEX IF NOT EXISTS _ss_files_sha256 ON _ss_files(sha256);
CREATE TABLE IF NOT EXISTS _ss_documents (
  id ${T} PRIMARY KEY,
  title ${T} NOT NULL,
  file_id ${T} NOT NULL REFERENCES _ss_files(id),
  object ${T} NOT NULL,
  record_id ${T} NOT NULL,
  attribute ${T} NOT NULL,
  created_at ${T} NOT NULL
);
CREATE INDEX IF NOT EXISTS _ss_documents_slot ON _ss_documents(object, record_id, attribute);
CREATE INDEX IF NOT EXISTS _ss_documents_file ON _ss_documents(file_id);
INSERT INTO _ss_meta (key, value) VALUES ('catalog_version', '0'), ('keys_version', '0') ON CONFLICT (key) DO NOTHING;
`,
  // 2: the rate-limit buckets every process shares (spec "Limits": per client IP, per minute)
  `
CREATE TABLE IF NOT EXISTS _ss_rate (
  bucket ${T} NOT NULL,
  ip ${T} NOT NULL,
  window_start bigint NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (bucket, ip, window_start)
);
`,
];

/** The layout this version writes. */
export const LAYOUT_VERSION = LAYOUT.length;

/** Any constant shared by every schemasync process: the key of the setup's advisory lock. */
const SETUP_LOCK = 0x5353_0001;

/**
 * Inside the caller's transaction: bring the database to LAYOUT_VERSION (nothing when it is
 * there). `upTo` is for tests that build an older layout.
 */
export async function setupDatabase(tx: Executor, upTo: number = LAYOUT_VERSION): Promise<{ from: number; to: number }> {
  await tx.get('SELECT pg_advisory_xact_lock(?)', [SETUP_LOCK]);
  await tx.exec(`CREATE TABLE IF NOT EXISTS _ss_meta (key ${T} PRIMARY KEY, value ${T} NOT NULL)`);
  const row = await tx.get<{ value: string }>("SELECT value FROM _ss_meta WHERE key = 'schema_version'");
  const current = row ? Number(row.value) : 0;
  if (!Number.isInteger(current) || current > LAYOUT_VERSION) {
    throw new Error(`this database was written by a newer schemasync (layout version ${row?.value} > ${LAYOUT_VERSION}); upgrade schemasync to use it`);
  }
  for (let v = current + 1; v <= upTo; v++) await tx.exec(LAYOUT[v - 1]!);
  if (upTo > current) {
    await tx.run(
      "INSERT INTO _ss_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [String(upTo)],
    );
  }
  return { from: current, to: Math.max(current, upTo) };
}

/** The catalog token's read: every transaction opens with it (driver.ts `opening`). */
export const CATALOG_TOKEN_SQL = "SELECT value FROM _ss_meta WHERE key = 'catalog_version'";

/** Moves whenever any process commits a schema write (the shared core bumps the row). */
export async function catalogToken(ex: Executor): Promise<unknown> {
  const row = await ex.get<{ value: string }>(CATALOG_TOKEN_SQL);
  return row?.value ?? null;
}
