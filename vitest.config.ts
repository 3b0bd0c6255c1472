import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // The run's own temp directory (TMPDIR for every worker and child); a test that leaves
    // anything in it fails the run (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    // A time limit only ends a test that hangs; it is never a verdict. The slowest tests (four
    // simulated days over HTTP, the chaos cases, real crashes) take 30-70 s on a 2-core machine
    // busy with other work, so the limit is far above that and no test sets a shorter one.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // The machine has 2 cores; more forks only thrash.
    maxWorkers: 2,
  },
});
