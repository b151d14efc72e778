import { defineConfig } from 'vitest/config';

// Unit tests sit beside the code (src/**/*.test.ts) and are pure; integration
// tests (test/**/*.it.test.ts) start real jobs through mpiexec on loopback.
// The machine has 2 cores and integration tests start several processes each,
// so files run two at a time.
export default defineConfig({
  resolve: { conditions: ['@tsmpi/source'] },
  ssr: { resolve: { conditions: ['@tsmpi/source'], externalConditions: ['@tsmpi/source'] } },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.unit.test.ts'],
          testTimeout: 30_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['packages/*/test/**/*.it.test.ts'],
          globalSetup: ['packages/core/test/build-programs.global.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
