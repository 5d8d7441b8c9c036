import { defineConfig } from 'vitest/config'

// Two projects: `unit` (pure logic, no IO) and `int` (real PostgreSQL, real HTTP, real processes).
// `npm test` runs both; `npm run test:unit` / `npm run test:int` run one.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.unit.test.ts'],
        },
      },
      {
        test: {
          name: 'int',
          include: ['test/**/*.int.test.ts', 'test/**/*.e2e.test.ts'],
          globalSetup: ['test/support/postgres-global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
})
