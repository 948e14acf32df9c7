import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: keep heavy suites (server processes, SIGKILL) from starving each other.
    maxWorkers: 2,
    globalSetup: ['test/support/global-setup.ts'],
  },
});
