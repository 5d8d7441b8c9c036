import { createPublicKey, randomUUID, type KeyObject } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { isAbsolute, join, resolve } from 'node:path'
import { setTimeout as sleepMs } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import pkg from '../package.json' with { type: 'json' }
import { makeRecording, type Recording } from './application/index.ts'
import type { CallbackUrls, CrashPoint, RecordingDeps } from './application/deps.ts'
import { decodeConfig, formatConfigErrors, type Config } from './config.ts'
import type { EventStore } from './application/ports/event-store.ts'
import { canonicalizers, satangCanonicalV1 } from './domain/gateway/canonical.ts'
import { DEFAULT_PAYMENT_STATUS_TABLE, DEFAULT_REFUND_STATUS_TABLE, extendStatusTable, type StatusTable } from './domain/gateway/statuses.ts'
import { makeLogger, type Logger } from './logger.ts'
import { loadOrCreateKeyPair, loadOrCreateToken } from './local-secrets.ts'
import { makeEsdbEventStore } from './adapters/eventstore/esdb.ts'
import { makePostgresEventStore } from './adapters/eventstore/postgres.ts'
import { makeBackgroundSigner } from './adapters/gateway/background-signer.ts'
import { makeGatewayClient, type GatewayClient } from './adapters/gateway/client.ts'
import { loadPrivateKey, loadPublicKey, makeSigner, makeVerifier, type Verifier } from './domain/gateway/signing.ts'
import { API_SCOPES, makeTokenMatcher, type ApiToken } from './adapters/http/api-tokens.ts'
import { CALLBACK_PATHS, registerCallbackRoutes } from './adapters/http/callback-routes.ts'
import { makeHttpServer, makeMetricsRegistry } from './adapters/http/server.ts'
import { registerLedgerRoutes } from './adapters/http/ledger-routes.ts'
import { registerV1Routes } from './adapters/http/v1-routes.ts'
import { startEmbeddedPostgres } from './adapters/postgres/embedded.ts'
import { makeKnex, makePostgresPool } from './platform/postgres/pool.ts'
import { migrateEventStore } from './adapters/postgres/migrations/eventstore.ts'
import { loadOrCreateGatewayKey } from './adapters/sandbox/keys.ts'
import { makeSandbox } from './adapters/sandbox/sandbox.ts'
import { makeReadModelQueries, PROJECTIONS, READ_MODEL_SCHEMA, migrateReadModels, projectionStatus, startProjector, type Projector, type ReadModels } from './projections/index.ts'
import { Gauge, type Registry } from 'prom-client'
import { makeReconcileDeps, startReconcileScheduler } from './roles/reconciliation.ts'
import { registerReconciliationRoutes } from './adapters/http/reconciliation-routes.ts'
import { acknowledgeBreak } from './application/reconciliation-acknowledge.ts'
import { makeReconciliationQueries } from './projections/reconciliation-queries.ts'

/**
 * The composition root: the only module that reads the environment and wires adapters from config.
 * Commands of the CLI call these functions; nothing else builds adapters.
 */

export const EVENT_STORE_SCHEMA = 'eventstore'
export { READ_MODEL_SCHEMA }

/** Start-up could not proceed; the message is for the operator and never carries a secret. */
export class StartupError extends Error {
  override readonly name = 'StartupError'
}

/** Reads `SATANG_CONFIG` (if set) and the environment, and decodes them; stops with every problem named. */
export const loadConfig = async (env: NodeJS.ProcessEnv = process.env): Promise<Config> => {
  const path = env['SATANG_CONFIG']
  let file: Record<string, unknown> = {}
  if (path !== undefined && path !== '') {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (e) {
      throw new StartupError(`SATANG_CONFIG: cannot read ${JSON.stringify(path)} (${e instanceof Error && 'code' in e ? String(e.code) : 'unreadable'})`)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new StartupError(`SATANG_CONFIG: ${JSON.stringify(path)} is not valid JSON`)
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new StartupError(`SATANG_CONFIG: ${JSON.stringify(path)} must hold a JSON object of settings`)
    file = { ...parsed }
  }
  const decoded = decodeConfig(env, file)
  if (E.isLeft(decoded)) throw new StartupError(formatConfigErrors(decoded.left))
  return decoded.right
}

export const rootLogger = (config: Config): Logger => makeLogger({ level: config.SATANG_LOG_LEVEL })

export const dataPath = (config: Config, ...parts: string[]): string => {
  const base = isAbsolute(config.SATANG_DATA_DIR) ? config.SATANG_DATA_DIR : resolve(process.cwd(), config.SATANG_DATA_DIR)
  return join(base, ...parts)
}

/** Where the read models and (by default) the event log live, and how it was reached. */
export type Database = {
  readonly pool: Pool
  /** Human description for start-up output, without credentials. */
  readonly description: string
  readonly close: () => Promise<void>
}

/** Connects to `SATANG_DATABASE_URL`, or starts embedded PostgreSQL in the data folder when it is unset. */
export const openDatabase = async (config: Config, log: Logger): Promise<Database> => {
  if (config.SATANG_DATABASE_URL !== undefined) {
    const pool = makePostgresPool({ url: config.SATANG_DATABASE_URL }, log)
    const u = new URL(config.SATANG_DATABASE_URL)
    return { pool, description: `PostgreSQL at ${u.hostname}:${u.port || '5432'}${u.pathname}`, close: () => pool.end() }
  }
  const dataDir = dataPath(config, 'postgres')
  const started = await startEmbeddedPostgres({ log }, { dataDir, port: config.SATANG_EMBEDDED_PG_PORT })()
  if (E.isLeft(started)) throw new StartupError(`embedded PostgreSQL: ${started.left.message}`)
  const embedded = started.right
  const pool = makePostgresPool({ url: embedded.url }, log)
  return {
    pool,
    description: `embedded PostgreSQL on 127.0.0.1:${String(embedded.port)}, data in ${embedded.dataDir} (${embedded.initialised ? 'new cluster initialised' : embedded.adopted ? 'existing data reused; server left running by a previous satang taken over' : 'existing data reused'})`,
    close: async () => {
      await pool.end()
      await embedded.stop()
    },
  }
}

/**
 * The database of a running (or stopped) satang, for tools such as `satang audit`: the configured URL;
 * else the embedded cluster — the one `satang up` is running on its port, or started here and stopped
 * again by `close`.
 */
export const openDatabaseForTool = async (config: Config, log: Logger): Promise<Database> => {
  if (config.SATANG_DATABASE_URL !== undefined) return openDatabase(config, log)
  const port = config.SATANG_EMBEDDED_PG_PORT
  const running = makePostgresPool({ url: `postgres://postgres:satang@127.0.0.1:${String(port)}/satang`, connectionTimeoutMs: 2_000 }, log)
  const reachable = await running.query('select 1').then(
    () => true,
    () => false,
  )
  if (reachable) return { pool: running, description: `embedded PostgreSQL on 127.0.0.1:${String(port)} (running)`, close: () => running.end() }
  await running.end()
  return openDatabase(config, log)
}

/**
 * Applies every pending migration: the event store's (when it lives in PostgreSQL) and the read
 * models' (knex migrations in `satang`). Safe to run repeatedly and from several processes at once.
 * Returns the names of the read-model migrations applied.
 */
export const migrate = async (db: Database, log: Logger, config?: Pick<Config, 'SATANG_EVENT_STORE'>): Promise<ReadonlyArray<string>> => {
  if (config?.SATANG_EVENT_STORE !== 'eventstoredb') {
    const knex = makeKnex(db.pool)
    try {
      const done = await migrateEventStore({ db: knex, log }, { schema: EVENT_STORE_SCHEMA })()
      if (E.isLeft(done)) throw new StartupError(`migration of the event store failed: ${done.left.cause instanceof Error ? done.left.cause.message : done.left.operation}`)
    } finally {
      // the pool belongs to the caller; knex only borrowed it
      await knex.destroy().catch((e: unknown) => log.debug({ err: e }, 'knex destroy'))
    }
  }
  try {
    return await migrateReadModels({ pool: db.pool, log }, { schema: READ_MODEL_SCHEMA, projections: PROJECTIONS })
  } catch (e) {
    throw new StartupError(`migration of the read models failed: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** The read models of this database, for code that reads them. */
export const readModelsOf = (db: Database): ReadModels => ({ pool: db.pool, schema: READ_MODEL_SCHEMA })

/** Projection lag on `/metrics` (`satang_projection_*`), read from the checkpoints at each scrape. */
export const registerProjectionMetrics = (registry: Registry, store: EventStore, db: Database, log: Logger): void => {
  let cached: { at: number; value: Promise<Awaited<ReturnType<typeof projectionStatus>>> } | undefined
  const statuses = async (): Promise<Awaited<ReturnType<typeof projectionStatus>>> => {
    const now = Date.now()
    if (cached === undefined || now - cached.at > 1000) cached = { at: now, value: projectionStatus(store, db.pool, READ_MODEL_SCHEMA, PROJECTIONS) }
    return cached.value.catch((e: unknown) => {
      log.warn({ err: e }, 'projection status unavailable for /metrics')
      return []
    })
  }
  const gauge = (name: string, help: string, value: (s: Awaited<ReturnType<typeof projectionStatus>>[number]) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['projection'],
      registers: [registry],
      async collect() {
        for (const s of await statuses()) this.set({ projection: s.name }, value(s))
      },
    })
  }
  gauge('satang_projection_lag_events', 'events in the log after the projection checkpoint (capped at 1,000,000)', (s) => s.eventsBehind)
  gauge('satang_projection_lag_seconds', 'age of the oldest event the projection has not applied (0 when caught up)', (s) => s.secondsBehind)
  gauge('satang_projection_events_applied', 'events applied by the projection since it was built', (s) => s.eventsApplied)
  gauge('satang_projection_failed', '1 when the projection stopped on an event it cannot apply (see satang project --status)', (s) => (s.state === 'failed' ? 1 : 0))
}

/**
 * `{ eventTable }` for the projector and rebuilds (`ProjectionTarget.eventTable`): the event table the
 * projections may copy payloads from, only when the log is PostgreSQL in the same database; else nothing.
 */
export const withEventTable = (config: Pick<Config, 'SATANG_EVENT_STORE'>): { readonly eventTable?: string } =>
  config.SATANG_EVENT_STORE === 'eventstoredb' ? {} : { eventTable: `"${EVENT_STORE_SCHEMA}".events` }

/** The projector over every read model, as `satang up` and `satang project` run it. */
export const runProjector = (config: Config, store: EventStore, db: Database, log: Logger): Projector => {
  const crash = config.SATANG_FAULT_CRASH_AFTER === 'ProjectionBatch'
  if (crash) log.warn('SATANG_FAULT_CRASH_AFTER=ProjectionBatch: this process kills itself in the middle of the third projector batch (tests only)')
  // Progress of long catch-ups: what each projection applied, every 10 s while it applies anything.
  const applied = new Map<string, number>()
  let lastReport = Date.now()
  const onApplied = (projection: string, events: number): void => {
    applied.set(projection, (applied.get(projection) ?? 0) + events)
    const now = Date.now()
    if (now - lastReport < 10_000) return
    const seconds = (now - lastReport) / 1000
    lastReport = now
    const perProjection = Object.fromEntries(applied)
    applied.clear()
    if (Object.values(perProjection).some((n) => n > 0)) log.info({ applied: perProjection, seconds: Math.round(seconds) }, 'projector progress: events applied per projection')
  }
  return startProjector(
    {
      store,
      pool: db.pool,
      log,
      onApplied,
      ...(crash
        ? {
            crashHook: (projection: string, batch: number) => {
              if (batch < 3) return
              log.warn({ projection, batch }, 'SATANG_FAULT_CRASH_AFTER=ProjectionBatch: killing the process before this projection commits')
              process.kill(process.pid, 'SIGKILL')
            },
          }
        : {}),
    },
    { schema: READ_MODEL_SCHEMA, projections: PROJECTIONS, batchSize: config.SATANG_PROJECTOR_BATCH_SIZE, ...withEventTable(config) },
  )
}

export const makeEventStore = (config: Config, db: Database, log: Logger): EventStore =>
  config.SATANG_EVENT_STORE === 'eventstoredb' && config.SATANG_EVENTSTOREDB_URL !== undefined
    ? makeEsdbEventStore({ log }, { connectionString: config.SATANG_EVENTSTOREDB_URL })
    : makePostgresEventStore({ pool: db.pool, log }, { schema: EVENT_STORE_SCHEMA })

/** The merchant_id the built-in sandbox registers when none is configured. */
export const SANDBOX_MERCHANT_ID = '140000000000000001'

/** The merchant satang serves: `SATANG_MERCHANT_ID`, or the built-in sandbox's default one. */
export const merchantIdOf = (config: Config): string | undefined =>
  config.SATANG_MERCHANT_ID ?? (config.SATANG_GATEWAY_BASE_URL === undefined ? SANDBOX_MERCHANT_ID : undefined)

/** The gateway satang talks to: the configured one, or the built-in sandbox. */
export type GatewayConnection = {
  readonly client: GatewayClient
  /** Verifies callbacks with the gateway's public key. */
  readonly verifier: Verifier
  readonly merchantId: string
  /** For start-up output: where the gateway is, without secrets. */
  readonly description: string
  readonly sandbox?: { readonly url: string; readonly controlUrl: string; readonly publicKeyUrl: string; readonly stateFile: string }
  /** The merchant key pair, when satang keeps it in the data folder. */
  readonly merchantKey?: { readonly privateKeyPath: string; readonly publicKeyPath: string; readonly generated: boolean }
  readonly close: () => Promise<void>
}

const readKeyFile = async (variable: string, path: string, load: (pem: string) => E.Either<{ readonly message: string }, KeyObject>): Promise<KeyObject> => {
  let pem: string
  try {
    pem = await readFile(path, 'utf8')
  } catch (e) {
    throw new StartupError(`${variable}: cannot read ${JSON.stringify(path)} (${e instanceof Error && 'code' in e ? String(e.code) : 'unreadable'})`)
  }
  const key = load(pem)
  if (E.isLeft(key)) throw new StartupError(`${variable}: ${key.left.message}`)
  return key.right
}

export const clientFor = (config: Config, log: Logger, baseUrl: string, signingKey: KeyObject, responseVerifier: Verifier | undefined, retriableCodes: ReadonlyArray<number>): GatewayClient =>
  makeGatewayClient({
    baseUrl,
    merchantSigner: makeSigner(canonicalizers[config.SATANG_CANONICALIZER] ?? satangCanonicalV1, signingKey),
    backgroundSigner: makeBackgroundSigner(canonicalizers[config.SATANG_CANONICALIZER] ?? satangCanonicalV1, signingKey),
    ...(responseVerifier === undefined ? {} : { gatewayVerifier: responseVerifier }),
    log,
    timeouts: { connectMs: config.SATANG_GATEWAY_CONNECT_TIMEOUT_MS, requestMs: config.SATANG_GATEWAY_TIMEOUT_MS },
    retry: { maxAttempts: config.SATANG_GATEWAY_QUERY_MAX_ATTEMPTS, baseDelayMs: config.SATANG_GATEWAY_RETRY_BASE_MS, maxDelayMs: config.SATANG_GATEWAY_RETRY_MAX_MS, retriableCodes },
  })

/**
 * `SATANG_GATEWAY_BASE_URL` with the configured keys; or, when it is unset, the sandbox in this
 * process: its gateway key and state under `<data>/sandbox`, the merchant key pair under `<data>`
 * (generated on first start), the merchant registered with its public key.
 */
export const connectGateway = async (config: Config, log: Logger): Promise<GatewayConnection> => {
  const canonicalizer = canonicalizers[config.SATANG_CANONICALIZER] ?? satangCanonicalV1
  if (config.SATANG_GATEWAY_BASE_URL !== undefined) {
    const { SATANG_MERCHANT_ID: merchantId, SATANG_MERCHANT_PRIVATE_KEY_FILE: keyFile, SATANG_GATEWAY_PUBLIC_KEY_FILE: gatewayKeyFile } = config
    if (merchantId === undefined || keyFile === undefined || gatewayKeyFile === undefined) throw new StartupError('a gateway base URL needs SATANG_MERCHANT_ID and both key files')
    const signingKey = await readKeyFile('SATANG_MERCHANT_PRIVATE_KEY_FILE', keyFile, loadPrivateKey)
    const gatewayKey = await readKeyFile('SATANG_GATEWAY_PUBLIC_KEY_FILE', gatewayKeyFile, loadPublicKey)
    const client = clientFor(config, log, config.SATANG_GATEWAY_BASE_URL, signingKey, undefined, [])
    const u = new URL(config.SATANG_GATEWAY_BASE_URL)
    return {
      client,
      verifier: makeVerifier(canonicalizer, gatewayKey),
      merchantId,
      description: `gateway at ${u.origin}${u.pathname === '/' ? '' : u.pathname}`,
      close: async () => client.close(),
    }
  }

  const merchantId = merchantIdOf(config) ?? SANDBOX_MERCHANT_ID
  let signingKey: KeyObject
  let merchantKey: GatewayConnection['merchantKey']
  if (config.SATANG_MERCHANT_PRIVATE_KEY_FILE !== undefined) {
    signingKey = await readKeyFile('SATANG_MERCHANT_PRIVATE_KEY_FILE', config.SATANG_MERCHANT_PRIVATE_KEY_FILE, loadPrivateKey)
  } else {
    const pair = await loadOrCreateKeyPair(dataPath(config, 'merchant-private.pem'), dataPath(config, 'merchant-public.pem'))
    if (E.isLeft(pair)) throw new StartupError(`SATANG_DATA_DIR: the merchant key: ${pair.left}`)
    signingKey = pair.right.privateKey
    merchantKey = { privateKeyPath: pair.right.privateKeyPath, publicKeyPath: pair.right.publicKeyPath, generated: pair.right.generated }
  }
  const sandboxDir = dataPath(config, 'sandbox')
  const gatewayKey = await loadOrCreateGatewayKey(undefined, sandboxDir)
  if (E.isLeft(gatewayKey)) throw new StartupError(`SATANG_DATA_DIR: the sandbox's gateway key: ${gatewayKey.left}`)
  const stateFile = join(sandboxDir, 'state.json')
  const sandbox = await makeSandbox(
    { log },
    {
      host: config.SATANG_HTTP_HOST,
      port: config.SATANG_SANDBOX_PORT,
      merchants: new Map([[merchantId, createPublicKey(signingKey)]]),
      gatewayPrivateKey: gatewayKey.right.privateKey,
      canonicalizer,
      statePath: stateFile,
    },
  ).catch((e: unknown) => {
    const code = e instanceof Error && 'code' in e ? String(e.code) : undefined
    throw new StartupError(
      code === 'EADDRINUSE' ? `SATANG_SANDBOX_PORT: port ${String(config.SATANG_SANDBOX_PORT)} is in use; choose another port for the built-in sandbox` : `the built-in sandbox did not start: ${e instanceof Error ? e.message : String(e)}`,
    )
  })
  const gatewayPublic = loadPublicKey(sandbox.publicKeyPem)
  if (E.isLeft(gatewayPublic)) throw new Error(`the sandbox's own public key is unusable: ${gatewayPublic.left.message}`)
  const verifier = makeVerifier(canonicalizer, gatewayPublic.right)
  // The sandbox signs its answers and rate-limits with 429001: both are its documented behaviour.
  const client = clientFor(config, log, sandbox.url, signingKey, verifier, [429001])
  return {
    client,
    verifier,
    merchantId,
    description: `the built-in sandbox at ${sandbox.url} (merchant ${merchantId})`,
    sandbox: { url: sandbox.url, controlUrl: sandbox.controlUrl, publicKeyUrl: sandbox.publicKeyUrl, stateFile },
    ...(merchantKey === undefined ? {} : { merchantKey }),
    close: async () => {
      client.close()
      await sandbox.close()
    },
  }
}

/** The merchant API's tokens: configured (`SATANG_API_TOKENS`), or one with every scope kept in `<data>/api-token`. */
export const apiTokens = async (config: Config): Promise<{ readonly tokens: ReadonlyArray<ApiToken>; readonly file?: { readonly path: string; readonly generated: boolean } }> => {
  if (config.SATANG_API_TOKENS !== undefined) return { tokens: config.SATANG_API_TOKENS }
  const local = await loadOrCreateToken(dataPath(config, 'api-token'))
  if (E.isLeft(local)) throw new StartupError(`SATANG_DATA_DIR: the API token: ${local.left}`)
  return { tokens: [{ name: 'default', token: local.right.token, scopes: [...API_SCOPES] }], file: { path: local.right.path, generated: local.right.generated } }
}

const urlHost = (host: string): string => (host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host)

/** The callback URLs satang gives the gateway, under `base`; each must fit the spec's 256 characters. */
export const callbackUrlsOf = (base: string): CallbackUrls => {
  const root = base.replace(/\/+$/, '')
  const urls = {
    notify: `${root}${CALLBACK_PATHS.notifications}`,
    checkoutRedirect: `${root}${CALLBACK_PATHS.checkoutRedirect}`,
    subscriptionRedirect: `${root}${CALLBACK_PATHS.subscriptionRedirect}`,
  }
  if (Object.values(urls).some((u) => u.length > 256)) throw new StartupError('SATANG_PUBLIC_URL: too long: the callback URLs must fit the gateway spec\'s 256 characters')
  return urls
}

/** Test-only fault injection (`SATANG_FAULT_CRASH_AFTER`): the process dies at once, as in a power cut. */
const crashPointOf =
  (config: Config, log: Logger) =>
  (point: CrashPoint): void => {
    if (config.SATANG_FAULT_CRASH_AFTER !== point) return
    log.warn({ point }, 'SATANG_FAULT_CRASH_AFTER: killing the process')
    process.kill(process.pid, 'SIGKILL')
  }

const abortableSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  sleepMs(ms, undefined, signal === undefined ? {} : { signal }).catch((e: unknown) => {
    if (e instanceof Error && e.name === 'AbortError') return
    throw e
  })

/** A running satang: its addresses, what it generated, and how to stop it. */
export type Running = {
  readonly httpUrl: string
  readonly publicUrl: string
  readonly database: string
  readonly gateway: Pick<GatewayConnection, 'description' | 'sandbox' | 'merchantKey' | 'merchantId'>
  readonly tokens: { readonly names: ReadonlyArray<string>; readonly file?: { readonly path: string; readonly generated: boolean } }
  readonly recording: Recording
  /** The projections the projector keeps current in this process (empty when SATANG_PROJECTOR=off). */
  readonly projections: ReadonlyArray<string>
  /** Settles with the number of unresolved creates found at start-up (they are being resolved by query). */
  readonly recovery: Promise<number>
  readonly stop: () => Promise<void>
}

/** The built-in sandbox's status for a failed payment (its `failedStatus` setting's default). */
const SANDBOX_FAILED_STATUS: StatusTable = { PF: { meaning: 'payment failed (the built-in sandbox)', outcome: 'failed' } }

/**
 * The spec's status codes plus the configured ones (`SATANG_PAYMENT_STATUSES`, `SATANG_REFUND_STATUSES`).
 * With the built-in sandbox as the gateway, its failed status is known too unless configured otherwise.
 */
export const statusTables = (config: Config): { readonly payment: StatusTable; readonly refund: StatusTable } => {
  const builtInSandbox = config.SATANG_GATEWAY_BASE_URL === undefined
  const payment = extendStatusTable(DEFAULT_PAYMENT_STATUS_TABLE, { ...(builtInSandbox ? SANDBOX_FAILED_STATUS : {}), ...(config.SATANG_PAYMENT_STATUSES ?? {}) })
  const refund = extendStatusTable(DEFAULT_REFUND_STATUS_TABLE, config.SATANG_REFUND_STATUSES ?? {})
  const problems = [
    ...(E.isLeft(payment) ? payment.left.map((p) => `SATANG_PAYMENT_STATUSES: ${p}`) : []),
    ...(E.isLeft(refund) ? refund.left.map((p) => `SATANG_REFUND_STATUSES: ${p}`) : []),
  ]
  if (E.isLeft(payment) || E.isLeft(refund)) throw new StartupError(['satang: invalid configuration:', ...problems.map((p) => `  ${p}`)].join('\n'))
  return { payment: payment.right, refund: refund.right }
}

/** `satang up`: database (embedded by default), migrations, event store, gateway (or the sandbox), HTTP service. */
export const startSatang = async (config: Config, log: Logger): Promise<Running> => {
  const tables = statusTables(config) // fails fast, before anything starts
  const db = await openDatabase(config, log)
  const closers: Array<() => Promise<void>> = [db.close]
  const stop = async (): Promise<void> => {
    for (const close of closers.reverse()) await close()
  }
  try {
    await migrate(db, log, config)
    if (config.SATANG_FAULT_CRASH_AFTER !== undefined) log.warn({ point: config.SATANG_FAULT_CRASH_AFTER }, 'SATANG_FAULT_CRASH_AFTER is set: this process kills itself at that point (tests only)')
    const store = makeEventStore(config, db, log)
    closers.push(store.close)
    if (config.SATANG_PROJECTOR === 'on') {
      const projector = runProjector(config, store, db, log)
      closers.push(projector.stop)
    }
    const gateway = await connectGateway(config, log)
    closers.push(gateway.close)
    const tokens = await apiTokens(config)

    // Known once the HTTP service listens (SATANG_HTTP_PORT may be 0); nothing is sent before that.
    const callbacks: { urls?: CallbackUrls } = {}
    const stopping = new AbortController()
    const deps: RecordingDeps = {
      store,
      gateway: gateway.client,
      gatewayVerifier: gateway.verifier,
      merchantId: gateway.merchantId,
      callbackUrls: () => {
        if (callbacks.urls === undefined) throw new Error('callback URLs are known once the HTTP service listens')
        return callbacks.urls
      },
      statusTables: tables,
      now: () => new Date(),
      newId: randomUUID,
      sleep: abortableSleep,
      log,
      resolve: {
        maxAttempts: config.SATANG_RESOLVE_MAX_ATTEMPTS,
        baseDelayMs: config.SATANG_RESOLVE_BASE_MS,
        maxDelayMs: 30_000,
        notFoundAfterMs: config.SATANG_GATEWAY_TIMEOUT_MS,
        notFoundCodes: config.SATANG_GATEWAY_NOT_FOUND_CODES,
      },
      crashPoint: crashPointOf(config, log),
      stopping: stopping.signal,
      readModels: makeReadModelQueries(readModelsOf(db)),
    }
    const recording = makeRecording(deps)
    const metrics = makeMetricsRegistry()
    registerProjectionMetrics(metrics, store, db, log)
    const app = makeHttpServer({
      log,
      version: pkg.version,
      metrics,
      checks: [
        {
          name: 'database',
          check: async () => {
            await db.pool.query('select 1')
            return null
          },
        },
      ],
      routes: [registerV1Routes({ recording, tokens: makeTokenMatcher(tokens.tokens) }), registerLedgerRoutes({ readModels: readModelsOf(db), tokens: makeTokenMatcher(tokens.tokens) }),
        registerReconciliationRoutes({
          readModels: readModelsOf(db),
          merchantId: gateway.merchantId,
          tokens: makeTokenMatcher(tokens.tokens),
          acknowledge: (id, actor, reason, cause) => acknowledgeBreak({ store, queries: makeReconciliationQueries(readModelsOf(db)), merchantId: gateway.merchantId, now: deps.now }, id, actor, reason, cause),
        }),
        registerCallbackRoutes({ callbacks: recording.callbacks, now: deps.now, metrics })],
    })
    const httpUrl = await app.listen({ host: config.SATANG_HTTP_HOST, port: config.SATANG_HTTP_PORT })
    closers.push(() => app.close())
    const address = app.server.address()
    const port = typeof address === 'object' && address !== null ? address.port : config.SATANG_HTTP_PORT
    const publicUrl = (config.SATANG_PUBLIC_URL ?? `http://${urlHost(config.SATANG_HTTP_HOST)}:${String(port)}`).replace(/\/+$/, '')
    callbacks.urls = callbackUrlsOf(publicUrl)
    if (config.SATANG_GATEWAY_BASE_URL !== undefined && config.SATANG_PUBLIC_URL === undefined) {
      log.warn({ publicUrl }, 'SATANG_PUBLIC_URL is unset: the gateway is given callback URLs on the listen address, which it may not reach')
    }

    // Creates recorded as requested, or of unknown outcome, are resolved by query (never re-sent).
    const recovery = recording.resolver.recover({ correlationId: `startup-${randomUUID()}`, causationId: 'startup' }).catch((e: unknown) => {
      log.error({ err: e }, 'start-up recovery failed')
      return 0
    })
    closers.push(async () => {
      stopping.abort()
      await recovery
      await recording.resolver.idle()
    })

    // ---- reconciliation scheduler (issue 13): the daily run and sweeps; belongs to the `scheduler` role ----
    if (config.SATANG_RECONCILE_SCHEDULER === 'on') {
      const scheduler = startReconcileScheduler(
        config,
        makeReconcileDeps({ config, store, db, gateway: gateway.client, merchantId: gateway.merchantId, statusTables: tables, log, newId: randomUUID }),
      )
      closers.push(scheduler.stop)
    }
    return {
      httpUrl,
      publicUrl,
      database: db.description,
      gateway: { description: gateway.description, merchantId: gateway.merchantId, ...(gateway.sandbox === undefined ? {} : { sandbox: gateway.sandbox }), ...(gateway.merchantKey === undefined ? {} : { merchantKey: gateway.merchantKey }) },
      tokens: { names: tokens.tokens.map((tk) => tk.name), ...(tokens.file === undefined ? {} : { file: tokens.file }) },
      recording,
      projections: config.SATANG_PROJECTOR === 'on' ? PROJECTIONS.map((p) => p.name) : [],
      recovery,
      stop,
    }
  } catch (e) {
    await stop()
    throw e
  }
}
