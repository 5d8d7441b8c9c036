import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { requireRecentNode } from '../support/node-version.ts'

requireRecentNode()

// `npm run test:topology`: the production topology as real processes (test/topology/*.topology.test.ts).
// Apart from `npm test`, since it runs for minutes; CI runs both.
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    name: 'topology',
    include: ['test/topology/**/*.topology.test.ts'],
    globalSetup: ['test/support/postgres-global-setup.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
})
