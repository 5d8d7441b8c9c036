import { defineConfig } from 'vitest/config'
import { requireRecentNode } from '../support/node-version.ts'

requireRecentNode()

// The tests Stryker runs against mutants of src/domain: the unit tests of the domain, of the pure
// projections over it, and of the gateway signature (which exercises domain/gateway/signing.ts and
// canonical.ts). No int/e2e test: a mutant is judged by fast, in-process tests only.
export default defineConfig({
  test: {
    // The dry run fails on one slow property test when the shared machine is loaded (5 s by default).
    testTimeout: 30_000,
    include: ['test/domain/**/*.unit.test.ts', 'test/projections/*.unit.test.ts', 'test/adapters/gateway/signing.unit.test.ts'],
  },
})
