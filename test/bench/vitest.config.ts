import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { requireRecentNode } from '../support/node-version.ts'

requireRecentNode()

// `npm run test:bench`: `npm run bench -- --quick` end to end (test/bench/*.bench.test.ts). Apart from
// `npm test`, since it starts every group's processes and takes a few minutes on a shared machine.
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    name: 'bench',
    include: ['test/bench/**/*.bench.test.ts'],
    globalSetup: ['test/support/postgres-global-setup.ts'],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
})
