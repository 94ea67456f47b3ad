import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CLI and API tests spawn real processes and servers; two cores here.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
