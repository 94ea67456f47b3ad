import { defineConfig } from 'vitest/config';

/**
 * Test files of test/api/ that run on SQLite only, and why (issue 15: the API suite runs on
 * both backends, parametrised by test/api/helpers.ts, except what is about SQLite itself).
 */
const SQLITE_ONLY_API = [
  // They open the server's SQLite file beside it (better-sqlite3) to check what was stored.
  'test/api/files-bodies.test.ts',
  'test/api/files-refusals.test.ts',
  'test/api/files.test.ts',
  'test/api/roles-sync.test.ts',
  'test/api/sources-sync.test.ts',
  // They start `schemasync serve` on a SQLite data folder in another process (the
  // PostgreSQL processes are test/api/multiprocess.test.ts).
  'test/api/serve.test.ts',
  'test/api/body-limit.test.ts',
  'test/api/files-memory.test.ts',
  'test/api/keys-revocation.test.ts',
  'test/api/search-cli.test.ts',
  // About the SQLite data folder itself (local.test.ts: the store's close seen as SQLite
  // removing its WAL) or about a database error with no database behind it (unavailable).
  'test/api/local.test.ts',
  'test/api/unavailable.test.ts',
];

/**
 * The PostgreSQL run of the API suite: on unless SCHEMASYNC_TEST_POSTGRES=0. The test cluster
 * still starts with it off: the PostgreSQL backend's own tests (test/unit/postgres-*) run in
 * the SQLite project, so PostgreSQL's server binaries are needed either way (the README's
 * install line); without them the run fails at once saying so.
 */
const POSTGRES_STORE = process.env['SCHEMASYNC_TEST_POSTGRES'] !== '0';
if (!POSTGRES_STORE) console.log('note: SCHEMASYNC_TEST_POSTGRES=0: the API suite runs on SQLite only');

/**
 * One real PostgreSQL cluster for the run (issue 15; each test file makes its own database).
 * Named by both projects; postgres-global.ts starts it once and shares it between them.
 */
const POSTGRES_CLUSTER = ['test/support/postgres-global.ts'];

export default defineConfig({
  test: {
    // CLI and API tests spawn real processes and servers; two cores here.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // @actions/workflow-parser imports its JSON schema without an import attribute, which
    // Node 20 refuses; transformed by vite it loads (test/cli/ci-workflow.test.ts).
    server: { deps: { inline: ['@actions/workflow-parser'] } },
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'], globalSetup: POSTGRES_CLUSTER, provide: { backend: 'sqlite' } } },
      ...(POSTGRES_STORE
        ? [{ extends: true as const, test: { name: 'postgres', include: ['test/api/**/*.test.ts'], exclude: [...SQLITE_ONLY_API], globalSetup: POSTGRES_CLUSTER, provide: { backend: 'postgres' as const } } }]
        : []),
    ],
  },
});
