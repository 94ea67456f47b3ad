import Database from 'better-sqlite3';

export type Db = Database.Database;

/**
 * The meta layer (issue 3 "Store"): every `_ss_` table the store owns, files and documents
 * included, under one schema version. Record tables are `"r_<object>"`, one STRICT table
 * per object (ddl.ts); the search index's tables are fulltext.ts's.
 */
const META_SQL = `
CREATE TABLE IF NOT EXISTS _ss_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS _ss_objects (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  label TEXT,
  description TEXT,
  owner_kind TEXT NOT NULL,
  owner_id TEXT,
  protected INTEGER NOT NULL DEFAULT 0,
  position INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS _ss_attributes (
  id TEXT PRIMARY KEY,
  object_id TEXT NOT NULL REFERENCES _ss_objects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  spec TEXT NOT NULL,
  position INTEGER NOT NULL,
  protected INTEGER NOT NULL DEFAULT 0,
  system INTEGER NOT NULL DEFAULT 0,
  owner_kind TEXT NOT NULL,
  owner_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (object_id, name)
) STRICT;
CREATE TABLE IF NOT EXISTS _ss_views (
  name TEXT PRIMARY KEY,
  decl TEXT NOT NULL,
  owner_kind TEXT NOT NULL,
  owner_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS _ss_roles (
  name TEXT PRIMARY KEY,
  decl TEXT NOT NULL,
  owner_kind TEXT NOT NULL,
  owner_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS _ss_sources (
  id TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  applied_at TEXT,
  declaration TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS _ss_keys (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  role TEXT NOT NULL,
  scopes TEXT,
  hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT,
  last_used_at TEXT
) STRICT;
CREATE TABLE IF NOT EXISTS _ss_idempotency (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  status INTEGER NOT NULL,
  body TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
) STRICT;
CREATE INDEX IF NOT EXISTS _ss_idempotency_expiry ON _ss_idempotency(expires_at);
CREATE TABLE IF NOT EXISTS _ss_source_history (
  source_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  applied_at TEXT NOT NULL,
  plan_hash TEXT NOT NULL,
  key_id TEXT,
  key_name TEXT,
  creates INTEGER NOT NULL,
  changes INTEGER NOT NULL,
  drops INTEGER NOT NULL,
  destructive TEXT NOT NULL,
  PRIMARY KEY (source_id, version)
) STRICT;
-- Files and documents (engine/store/sql/files.ts, documents.ts). Not STRICT: created so by
-- their first release, and CREATE IF NOT EXISTS never alters a table that exists.
CREATE TABLE IF NOT EXISTS _ss_files (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  mime_type TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  uploaded_by TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS _ss_files_sha256 ON _ss_files(sha256);
CREATE TABLE IF NOT EXISTS _ss_documents (
  id TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  file_id TEXT NOT NULL REFERENCES _ss_files(id),
  object TEXT NOT NULL,
  record_id TEXT NOT NULL,
  attribute TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS _ss_documents_slot ON _ss_documents(object, record_id, attribute);
CREATE INDEX IF NOT EXISTS _ss_documents_file ON _ss_documents(file_id);
`;

/** Bumped with a migration step below when the meta layout changes. */
const SCHEMA_VERSION = 1;

/** How long a statement waits for a lock another connection holds before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * How long writes that never pause may put off the upkeep done once they pause: the WAL's
 * copy back (checkpointer.ts) and the search index's merging (fulltext-merge.ts). Past it,
 * that upkeep runs while the writes go on, once per this long.
 */
export const PUT_OFF_MS = 2000;

export function openDatabase(path: string): Db {
  const db = new Database(path);
  // Several connections may share the file (two servers on one data folder, a CLI beside a
  // server). The busy timeout comes first so every statement after it, the WAL switch
  // included, waits for a lock another connection holds instead of failing at once.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // TEMP tables in memory, not in a temp file with its own rollback journal: a table rebuild
  // (columns.ts) copies the rows through a TEMP table, which in a file cost ~250 write syscalls
  // per push of a type change. Only that copy and SQLite's transient b-trees (DISTINCT,
  // IN lists) live there; large sorts still spill to files (SQLite's sorter).
  db.pragma('temp_store = MEMORY');
  // A write: BEGIN IMMEDIATE (see writeTransaction), so a second process opening the file
  // while the first takes writes waits for the lock rather than exiting "database is locked".
  writeTransaction(db, () => {
    db.exec(META_SQL);
    const row = db.prepare("SELECT value FROM _ss_meta WHERE key = 'schema_version'").get() as { value: string } | undefined;
    const current = row ? Number(row.value) : 0;
    if (current > SCHEMA_VERSION) {
      throw new Error(`database ${path} was written by a newer schemasync (schema version ${current} > ${SCHEMA_VERSION})`);
    }
    // Future migrations run here, one `if (current < n)` block each.
    db.prepare("INSERT INTO _ss_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(
      String(SCHEMA_VERSION),
    );
  });
  return db;
}

/**
 * Run `fn` as a write transaction: BEGIN IMMEDIATE, which takes the write lock up front and
 * waits for it (busy_timeout) while another connection holds it. A deferred BEGIN starts as
 * a reader and must upgrade at its first write; in WAL mode that upgrade fails at once with
 * SQLITE_BUSY (busy_timeout does not apply) when another connection holds the lock or has
 * committed since this one's snapshot, so a read-then-write would fail instead of waiting.
 * Inside another transaction it is a savepoint, as any nested better-sqlite3 transaction.
 */
export function writeTransaction<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

