import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CLI and API tests spawn real processes and servers; two cores here.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One real PostgreSQL cluster for the run (issue 15); each test file makes its own database.
    globalSetup: ['test/support/postgres-global.ts'],
    // @actions/workflow-parser imports its JSON schema without an import attribute, which
    // Node 20 refuses; transformed by vite it loads (test/cli/ci-workflow.test.ts).
    server: { deps: { inline: ['@actions/workflow-parser'] } },
  },
});
