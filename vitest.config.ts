import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineConfig } from 'vitest/config'
import { requireRecentNode } from './test/support/node-version.ts'

requireRecentNode()

// Four projects, run by `npm test` in two tiers (docs/development.md "Tests and benchmarks"):
// 1. `unit` (pure logic), `int` (real PostgreSQL, real HTTP, real processes) and `e2e` (whole `satang
//    up`s, the CLI on them, the browser) side by side, FILES_AT_ONCE files at a time. Every such file
//    makes its own databases, schemas, roles and temporary folders under random names and listens on
//    ports the OS picks; each worker slot has a PostgreSQL server of its own (test/support/postgres.ts).
// 2. then `serial`, one file at a time with the machine to itself: the files that SIGKILL processes,
//    stop them under load, take a broker down or hold transactions open and wait on what follows (some
//    within a bound), and the restore drill (whose pg_dump must match the first server's version).
// `npm run test:unit` / `test:int` / `test:e2e` (e2e and serial) run a part.

const FILES_AT_ONCE = 3

const SERIAL = [
  'test/e2e/*-crash.e2e.test.ts',
  'test/e2e/relay-*.e2e.test.ts',
  'test/e2e/up-shutdown.e2e.test.ts',
  'test/e2e/horizon-*.e2e.test.ts',
  'test/topology/restore-drill.int.test.ts',
  // Races eight processes for a stale lock beside two CPU burners: it would slow every file beside it.
  'test/adapters/os/instance-lock.int.test.ts',
]

// The satang processes the tests spawn (hundreds of `satang …` runs) reuse Node's compiled code,
// about half the CPU of each start. The cache is keyed by the source, so a stale entry is never used.
process.env['NODE_COMPILE_CACHE'] ??= join(tmpdir(), 'satang-test-node-compile-cache')

const withDatabase = {
  globalSetup: ['test/support/postgres-global-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
}

export default defineConfig({
  test: {
    reporters: ['default', './test/support/slowest-files-reporter.ts'],
    projects: [
      {
        test: { name: 'unit', include: ['test/**/*.unit.test.ts'], maxWorkers: FILES_AT_ONCE, sequence: { groupOrder: 0 } },
      },
      {
        test: { name: 'int', include: ['test/**/*.int.test.ts'], exclude: SERIAL, ...withDatabase, maxWorkers: FILES_AT_ONCE, sequence: { groupOrder: 0 } },
      },
      {
        test: { name: 'e2e', include: ['test/**/*.e2e.test.ts'], exclude: SERIAL, ...withDatabase, maxWorkers: FILES_AT_ONCE, sequence: { groupOrder: 0 } },
      },
      {
        test: { name: 'serial', include: SERIAL, ...withDatabase, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
})
