import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: keep heavy suites (server processes, SIGKILL) from starving each other.
    maxWorkers: 2,
    // A worker runs its files one after another in one module graph, rather than a fresh process
    // per file: importing the server's graph (the Mongo driver, ioredis, uWebSockets.js, Playwright)
    // cost each of ~200 files seconds of CPU, as much as most of them spend testing. Every suite
    // stops what it starts and restores what it patches, in afterEach/afterAll or finally.
    isolate: false,
    globalSetup: ['test/support/global-setup.ts'],
    // The longest files first (by a recorded run), so that the two workers finish together.
    sequence: { sequencer: LongestFirstSequencer },
  },
});
