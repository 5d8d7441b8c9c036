import pkg from '../package.json' with { type: 'json' }
import * as E from 'fp-ts/lib/Either.js'
import { makeTokenMatcher, type TokenMatcher } from './adapters/http/api-tokens.ts'
import { registerHorizonMetrics } from './adapters/http/horizon-metrics.ts'
import { makeHttpServer, makeMetricsRegistry, makeMetricsServer, registeredRoutes, stopHttpServer, type HealthCheck, type RegisteredRoute } from './adapters/http/server.ts'
import type { EventStore } from './application/ports/event-store.ts'
import { checkServiceRole, EVENT_STORE_SCHEMA, lockDataDirOf, makeEventStore, migrate, openDatabase } from './composition/database.ts'
import { connectGateway, statusTables, type GatewayConnection } from './composition/gateway.ts'
import { ConfigurationError, StartupError, StartupFailure } from './composition/startup.ts'
import { startProcessTracing } from './composition/tracing.ts'
import { observedEventStore } from './adapters/telemetry/observed-store.ts'
import { observedGateway } from './adapters/telemetry/observed-gateway.ts'
import type { Config } from './config.ts'
import { loadOrCreateToken } from './local-secrets.ts'
import type { Logger } from './logger.ts'
import { startApiRole, type ApiRole } from './roles/api.ts'
import { projectionsRunBy, registerProjectionMetrics, startProjectorRole } from './roles/projector.ts'
import { rolesOf, type ProcessContext, type Role, type RoleChoice, type StartedRole } from './roles/role.ts'
import { startSchedulerRole } from './roles/scheduler.ts'

/**
 * The composition root: builds satang's object graph from the configuration and starts the roles of
 * one process (src/roles/, each with its own start and stop). With src/composition/ (the database, the
 * event store, the gateway) it is the only code that wires adapters; the CLI calls it.
 */

export { ConfigurationError, DataDirInUse, StartupError, StartupFailure, dataPath, loadConfig, rootLogger } from './composition/startup.ts'
export { EVENT_STORE_SCHEMA, READ_MODEL_SCHEMA, makeEventStore, migrate, openDatabase, openDatabaseForTool, readModelsOf, withEventTable, type Database } from './composition/database.ts'
export { SANDBOX_MERCHANT_ID, clientFor, connectGateway, merchantIdOf, statusTables, type GatewayConnection } from './composition/gateway.ts'
export { apiTokens, callbackUrlsOf } from './roles/api.ts'
export { registerProjectionMetrics, runProjector } from './roles/projector.ts'
export { ROLES, isRoleChoice, type Role, type RoleChoice } from './roles/role.ts'

const STARTERS: Readonly<Record<Role, (ctx: ProcessContext) => StartedRole | Promise<StartedRole>>> = {
  api: startApiRole,
  projector: startProjectorRole,
  // Loaded only by a process that runs the relay: its Kafka client alone is about 45 MiB of RSS
  // once imported (issue 31), which the other roles need not carry.
  relay: async (ctx) => (await import('./roles/relay.ts')).startRelayRole(ctx),
  scheduler: startSchedulerRole,
}

/** One satang process: the roles it runs, where its HTTP service listens, and how to stop it. */
export type RunningProcess = {
  readonly roles: ReadonlyArray<Role>
  readonly httpUrl: string
  /** Where `/metrics` is served: `httpUrl`, or its own port (`SATANG_METRICS_PORT`). */
  readonly metricsUrl: string
  /** The file of the token `/metrics` requires (`SATANG_METRICS_TOKEN_FILE`), when there is one. */
  readonly metricsToken?: { readonly path: string; readonly generated: boolean }
  readonly database: string
  /** The API role, when this process runs it. */
  readonly api?: ApiRole
  /** Lines for the start-up output of the other roles. */
  readonly summary: ReadonlyArray<string>
  /** Every HTTP route this process serves. */
  readonly routes: () => ReadonlyArray<RegisteredRoute>
  /** Stops everything (`shutdown`), rejecting with what did not stop cleanly. */
  readonly stop: () => Promise<void>
  /**
   * Stops everything within `SATANG_SHUTDOWN_TIMEOUT_MS`: the HTTP service first (`/readyz` 503 at once,
   * requests in flight finish), then each role, the gateway, the store and the database. Resolves with
   * what did not stop cleanly (failed, or still running at the deadline); empty when all did.
   */
  readonly shutdown: () => Promise<ReadonlyArray<string>>
}

/** Once the deadline has passed, each part still left to stop is given this long before it is abandoned (and the stop is not clean). */
const LAST_CHANCE_MS = 250

/** Of the stop deadline, what the roles keep for themselves after requests in flight: 2 s, or a fifth of a shorter deadline. */
export const roleStopReserveMs = (deadlineMs: number): number => Math.min(2_000, Math.floor(deadlineMs / 5))

type Closer = { readonly what: string; readonly close: () => Promise<void> }

/** Runs `closers` last first, each within what is left until `deadline`; returns what failed or did not finish. */
const closeAll = async (closers: ReadonlyArray<Closer>, deadline: number): Promise<ReadonlyArray<string>> => {
  const problems: string[] = []
  for (const c of [...closers].reverse()) {
    const late = Date.now() >= deadline
    const allowed = late ? LAST_CHANCE_MS : deadline - Date.now()
    let timer: NodeJS.Timeout | undefined
    const outcome = await Promise.race([
      c.close().then(
        () => null,
        (e: unknown) => `${c.what}: the stop failed: ${e instanceof Error ? e.message : String(e)}`,
      ),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`${c.what}: still stopping at the deadline (SATANG_SHUTDOWN_TIMEOUT_MS); abandoned`), allowed)
        timer.unref()
      }),
    ])
    clearTimeout(timer)
    if (outcome !== null) problems.push(outcome)
  }
  // Every part stopped, but not all within the deadline: not a clean stop either.
  const over = Date.now() - deadline
  if (problems.length === 0 && over > 0) problems.push(`the stop ended ${String(over)} ms after the deadline (SATANG_SHUTDOWN_TIMEOUT_MS)`)
  return problems
}

/** `/healthz`'s check of an event store outside the database: its head can be read. */
const eventStoreCheck = (store: EventStore): HealthCheck => ({
  name: 'event_store',
  check: async () => {
    const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('the event store did not answer within 3 s'), 3_000).unref())
    const answer = store.headPosition()().then((head) => (E.isLeft(head) ? `the event store failed (${head.left.operation}): ${head.left.cause instanceof Error ? head.left.cause.message : 'unreachable'}` : null))
    return Promise.race([answer, timeout])
  },
})

/** Why a role cannot run on its own with this configuration; undefined when it can. */
const separateRoleProblem = (choice: RoleChoice, config: Config): string | undefined => {
  if (choice === 'all') return undefined
  if (config.SATANG_DATABASE_URL === undefined) {
    return `--role ${choice} runs one part of satang in its own process, and the parts share one database: set SATANG_DATABASE_URL (embedded PostgreSQL belongs to satang up --role all)`
  }
  if (choice === 'scheduler' && config.SATANG_GATEWAY_BASE_URL === undefined) {
    return '--role scheduler queries the gateway: set SATANG_GATEWAY_BASE_URL (the built-in sandbox runs only inside the api or all role)'
  }
  return undefined
}

/** The token `/metrics` requires: the one in `SATANG_METRICS_TOKEN_FILE` (generated there when absent), or none. */
const metricsTokenOf = async (config: Config): Promise<{ readonly matcher: TokenMatcher; readonly file: { readonly path: string; readonly generated: boolean } } | undefined> => {
  const path = config.SATANG_METRICS_TOKEN_FILE
  if (path === undefined) return undefined
  const loaded = await loadOrCreateToken(path)
  if (E.isLeft(loaded)) throw new StartupError(`SATANG_METRICS_TOKEN_FILE: ${loaded.left}`)
  // What fits an `Authorization: Bearer` header unchanged; a token or its digest `sha256:<hex>`.
  if (!/^[\x21-\x7e]+$/.test(loaded.right.token)) throw new StartupError(`SATANG_METRICS_TOKEN_FILE: ${JSON.stringify(path)} must hold one token (or sha256:<hex> of it) of printable ASCII without spaces`)
  return { matcher: makeTokenMatcher([{ name: 'metrics', token: loaded.right.token, scopes: [] }]), file: { path, generated: loaded.right.generated } }
}

const listenError = (variable: string, port: number) => (e: unknown): never => {
  const code = e instanceof Error && 'code' in e ? String(e.code) : undefined
  throw new StartupFailure(`${variable}: cannot listen on port ${String(port)}: ${code === 'EADDRINUSE' ? 'the address is in use' : code === 'EACCES' ? 'permission denied' : e instanceof Error ? e.message : String(e)}`)
}

/**
 * `satang up [--role …]`: the database (embedded by default, only for `all`), migrations, the event
 * store, then each role of `choice`, and one HTTP service for the process (`/healthz`, `/metrics`, and
 * the routes of its roles).
 */
/** How `satang up` was asked to start. */
export type StartOptions = {
  /** Start even when the database connection is a superuser's (loud warning): `satang up --allow-superuser`, test databases only. */
  readonly allowSuperuser?: boolean
}

export const startProcess = async (config: Config, log: Logger, choice: RoleChoice = 'all', options: StartOptions = {}): Promise<RunningProcess> => {
  const roles = rolesOf(choice)
  const problem = separateRoleProblem(choice, config)
  if (problem !== undefined) throw new ConfigurationError(problem)
  if (roles.includes('api')) statusTables(config) // fails fast, before anything starts
  const metricsToken = await metricsTokenOf(config)
  // The data directory holds embedded PostgreSQL and the built-in sandbox's state: one owner at a time.
  const ownsDataDir = choice === 'all' || (choice === 'api' && config.SATANG_GATEWAY_BASE_URL === undefined)
  const command = choice === 'all' ? 'satang up' : `satang up --role ${choice}`
  const lock = ownsDataDir ? await lockDataDirOf(config, log, command) : undefined
  const db = await openDatabase(config, log).catch(async (e: unknown) => {
    await lock?.release()
    throw e
  })
  // Tracing stops last (closers run last first): the spans of the stop itself are sent.
  const tracing = await startProcessTracing(config, choice, pkg.version, log).catch(async (e: unknown) => {
    // Nothing else holds the pool and the lock yet: release them here, or a failed start leaks both.
    await db.close().catch(() => undefined)
    await lock?.release()
    throw e
  })
  const closers: Closer[] = [{ what: 'tracing', close: tracing.shutdown }, ...(lock === undefined ? [] : [{ what: 'the data directory lock', close: lock.release }]), { what: 'the database', close: db.close }]
  const shutdown = (): Promise<ReadonlyArray<string>> => closeAll(closers.splice(0), Date.now() + config.SATANG_SHUTDOWN_TIMEOUT_MS)
  const stop = async (): Promise<void> => {
    const problems = await shutdown()
    if (problems.length > 0) throw new Error(`satang did not stop cleanly: ${problems.join('; ')}`)
  }
  try {
    // Before the migrations (a superuser is refused before it changes anything) and after (who owns the event store now).
    // The first statement on the database: when it cannot be reached, a start-up failure (exit 3, as satang migrate), not a crash.
    const before = await checkServiceRole(db, config, log, options.allowSuperuser === true).catch((e: unknown) => {
      if (e instanceof StartupError) throw e
      throw new StartupFailure(`the database cannot be reached (${db.description}): ${e instanceof Error ? e.message : String(e)}`)
    })
    await migrate(db, log, config)
    const warnings = before.length > 0 ? before : await checkServiceRole(db, config, log, options.allowSuperuser === true)
    if (config.SATANG_FAULT_CRASH_AFTER !== undefined) log.warn({ point: config.SATANG_FAULT_CRASH_AFTER }, 'SATANG_FAULT_CRASH_AFTER is set: this process kills itself at that point (tests only)')
    const metrics = makeMetricsRegistry()
    const store = observedEventStore(makeEventStore(config, db, log), metrics)
    closers.push({ what: 'the event store', close: store.close })
    registerProjectionMetrics(metrics, store, db, log)
    if (config.SATANG_EVENT_STORE === 'postgres') registerHorizonMetrics(metrics, db.pool, EVENT_STORE_SCHEMA, log)
    let gateway: Promise<GatewayConnection> | undefined
    const connect = (): Promise<GatewayConnection> => {
      if (gateway === undefined) {
        const connecting = connectGateway(config, log, command).then((c) => ({ ...c, client: observedGateway(c.client, metrics) }))
        gateway = connecting
        closers.push({ what: 'the gateway', close: async () => (await connecting.catch(() => undefined))?.close() })
      }
      return gateway
    }
    const ctx: ProcessContext = { config, log, db, store, metrics, gateway: connect }
    const started: StartedRole[] = []
    for (const role of roles) {
      const r = await STARTERS[role](ctx)
      closers.push({ what: `the ${role} role`, close: r.stop })
      started.push(r)
    }
    const app = makeHttpServer({
      log,
      version: pkg.version,
      metrics,
      bodyLimit: config.SATANG_HTTP_BODY_LIMIT,
      maxFieldLength: config.SATANG_HTTP_MAX_FIELD_LENGTH,
      metricsHere: config.SATANG_METRICS_PORT === undefined,
      accessLogHealth: config.SATANG_ACCESS_LOG_HEALTH === 'on',
      ...(metricsToken === undefined ? {} : { metricsToken: metricsToken.matcher }),
      checks: [
        {
          name: 'database',
          check: async () => {
            await db.pool.query('select 1')
            return null
          },
        },
        // EventStoreDB is a server of its own: /healthz says when the log is out of reach (with PostgreSQL
        // the log is in the database checked above).
        ...(config.SATANG_EVENT_STORE === 'eventstoredb' ? [eventStoreCheck(store)] : []),
        ...started.flatMap((r) => r.checks),
      ],
      readiness: started.flatMap((r) => r.readiness),
      ...(config.SATANG_TRUST_PROXY === undefined ? {} : { trustProxy: config.SATANG_TRUST_PROXY }),
      routes: started.flatMap((r) => r.routes),
    })
    // The roles learn the address in the server's 'listening' event: it fires as the socket is bound,
    // before any connection is read, so no request finds them not knowing it (a create needs satang's
    // callback URLs). After listen() resolves was too late: requests came in meanwhile and got 500.
    app.server.once('listening', () => {
      const address = app.server.address()
      const port = typeof address === 'object' && address !== null ? address.port : config.SATANG_HTTP_PORT
      const host = typeof address === 'object' && address !== null ? (address.family === 'IPv6' ? `[${address.address}]` : address.address) : config.SATANG_HTTP_HOST
      for (const r of started) r.listening({ httpUrl: `http://${host}:${String(port)}`, port })
    })
    // A metrics server of its own listens first, so the main one is never left open when it cannot.
    const metricsPort = config.SATANG_METRICS_PORT
    let metricsUrl: string | undefined
    if (metricsPort !== undefined) {
      const server = makeMetricsServer({ log, metrics, ...(metricsToken === undefined ? {} : { token: metricsToken.matcher }) })
      closers.push({ what: 'the metrics server', close: () => server.close() })
      metricsUrl = await server.listen({ host: config.SATANG_METRICS_HOST, port: metricsPort }).catch(listenError('SATANG_METRICS_PORT', metricsPort))
    }
    const httpUrl = await app.listen({ host: config.SATANG_HTTP_HOST, port: config.SATANG_HTTP_PORT })
    // The HTTP service stops first (before the roles): requests in flight finish while everything they need still runs.
    closers.push({
      what: 'the HTTP service',
      close: async () => {
        const abandoned = await stopHttpServer(app, { deadlineMs: config.SATANG_SHUTDOWN_TIMEOUT_MS - roleStopReserveMs(config.SATANG_SHUTDOWN_TIMEOUT_MS), log })
        if (abandoned.length > 0) throw new Error(`${String(abandoned.length)} request(s) still in flight at the deadline were abandoned: ${abandoned.slice(0, 5).join(', ')}`)
      },
    })
    await lock?.describe({ url: httpUrl })
    const api = started.find((r): r is ApiRole => r.role === 'api' && 'recording' in r)
    return {
      roles,
      httpUrl,
      metricsUrl: metricsUrl ?? httpUrl,
      ...(metricsToken === undefined ? {} : { metricsToken: metricsToken.file }),
      database: db.description,
      ...(api === undefined ? {} : { api }),
      summary: [...warnings, ...started.flatMap((r) => r.summary())],
      routes: () => registeredRoutes(app),
      stop,
      shutdown,
    }
  } catch (e) {
    await shutdown()
    throw e
  }
}

/** A running satang with every role (`satang up`): its addresses, what it generated, and how to stop it. */
export type Running = Pick<ApiRole, 'gateway' | 'tokens' | 'recording' | 'recovery'> & {
  readonly httpUrl: string
  /** Where `/metrics` is served (`httpUrl` unless `SATANG_METRICS_PORT` is set). */
  readonly metricsUrl: string
  readonly publicUrl: string
  readonly database: string
  /** The projections the projector keeps current in this process (empty when SATANG_PROJECTOR=off). */
  readonly projections: ReadonlyArray<string>
  /** Every HTTP route it serves. */
  readonly routes: () => ReadonlyArray<RegisteredRoute>
  readonly stop: () => Promise<void>
}

/** `satang up` with every role in this process: the quick start. */
export const startSatang = async (config: Config, log: Logger, options: StartOptions = {}): Promise<Running> => {
  const running = await startProcess(config, log, 'all', options)
  const api = running.api
  if (api === undefined) {
    await running.stop()
    throw new Error('satang up --role all started without its API role')
  }
  return {
    httpUrl: running.httpUrl,
    metricsUrl: running.metricsUrl,
    publicUrl: api.publicUrl(),
    database: running.database,
    gateway: api.gateway,
    tokens: api.tokens,
    recording: api.recording,
    projections: projectionsRunBy(config),
    recovery: api.recovery,
    routes: running.routes,
    stop: running.stop,
  }
}
