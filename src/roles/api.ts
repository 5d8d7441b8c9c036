import { randomUUID } from 'node:crypto'
import { setTimeout as sleepMs } from 'node:timers/promises'
import { Gauge, type Registry } from 'prom-client'
import * as E from 'fp-ts/lib/Either.js'
import { API_SCOPES, makeTokenMatcher, type ApiToken } from '../adapters/http/api-tokens.ts'
import { CALLBACK_PATHS, registerCallbackRoutes } from '../adapters/http/callback-routes.ts'
import { registerConsoleRoutes } from '../adapters/http/console/routes.ts'
import { registerLedgerRoutes } from '../adapters/http/ledger-routes.ts'
import { registerReconciliationMetrics } from '../adapters/http/reconciliation-metrics.ts'
import { registerReconciliationRoutes } from '../adapters/http/reconciliation-routes.ts'
import { registerV1Routes } from '../adapters/http/v1-routes.ts'
import { scrapedCounter } from '../adapters/http/scraped-counter.ts'
import { tracedRecording } from '../adapters/telemetry/traced-recording.ts'
import { makePostgresStreamLocks } from '../adapters/postgres/job-lock.ts'
import type { CallbackUrls, Cause, CrashPoint, RecordingDeps } from '../application/deps.ts'
import type { UseCaseResult } from '../application/results.ts'
import { makeRecording, type Recording } from '../application/index.ts'
import { acknowledgeBreak } from '../application/reconciliation-acknowledge.ts'
import { makeAggregateStreamCache, type AggregateStreamCache, type StreamCacheStats } from '../application/stream-cache.ts'
import { asOfReads } from '../composition/as-of.ts'
import { readModelsOf } from '../composition/database.ts'
import { statusTables, type GatewayConnection } from '../composition/gateway.ts'
import { openIdSettingsOf, sessionSecretOf } from '../composition/secret-files.ts'
import { makeScryptPasswords } from '../adapters/crypto/scrypt-passwords.ts'
import { makePostgresConsoleAccounts } from '../adapters/postgres/console-accounts.ts'
import { StartupError, dataPath } from '../composition/startup.ts'
import type { Config } from '../config.ts'
import { loadOrCreateToken } from '../local-secrets.ts'
import type { Logger } from '../logger.ts'
import { makeReadModelQueries } from '../projections/index.ts'
import { makeReconciliationQueries } from '../projections/reconciliation/queries.ts'
import type { HealthCheck } from '../adapters/http/server.ts'
import type { ProcessContext, StartedRole } from './role.ts'

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

/** The stream cache on `/metrics`: entries now, hits and misses since this process started. */
const registerStreamCacheMetrics = (registry: Registry, cache: AggregateStreamCache): void => {
  new Gauge({
    name: 'satang_stream_cache_entries',
    help: 'streams whose state the API process holds (SATANG_STREAM_CACHE_SIZE at most)',
    registers: [registry],
    collect() {
      this.set(cache.stats().size)
    },
  })
  const counter = (name: string, help: string, value: (s: StreamCacheStats) => number): void => scrapedCounter(registry, { name, help }, () => [{ labels: {}, value: value(cache.stats()) }])
  counter('satang_stream_cache_hits_total', 'commands decided on a cached stream state (no read)', (s) => s.hits)
  counter('satang_stream_cache_misses_total', 'commands that read their stream', (s) => s.misses)
  new Gauge({
    name: 'satang_stream_cache_bytes',
    help: 'about how many bytes the cached stream states hold (SATANG_STREAM_CACHE_BYTES at most)',
    registers: [registry],
    collect() {
      this.set(cache.stats().bytes)
    },
  })
  counter('satang_stream_cache_evictions_total', 'streams dropped to stay within SATANG_STREAM_CACHE_SIZE and SATANG_STREAM_CACHE_BYTES', (s) => s.evictions)
}

/** `/readyz` of the API role: the event store answers (its head is read) and the read-model database answers. */
const apiReadiness = (store: ProcessContext['store'], db: ProcessContext['db']): ReadonlyArray<HealthCheck> => [
  {
    name: 'event_store',
    check: async () => {
      const head = await store.headPosition()()
      if (E.isRight(head)) return null
      const cause = head.left.cause
      return `the event store failed (${head.left.operation}): ${cause instanceof Error ? cause.message : 'unreachable'}`
    },
  },
  {
    name: 'read_models',
    check: async () => {
      await db.pool.query('select 1')
      return null
    },
  },
]

/** The API role as it runs: what it generated, the gateway it talks to, and the recording it serves. */
export type ApiRole = StartedRole & {
  readonly gateway: Pick<GatewayConnection, 'description' | 'sandbox' | 'merchantKey' | 'merchantId'>
  readonly tokens: { readonly names: ReadonlyArray<string>; readonly file?: { readonly path: string; readonly generated: boolean } }
  /** The console session secret kept in the data folder (absent with SATANG_SESSION_SECRET_FILE). */
  readonly sessionSecretFile?: { readonly path: string; readonly generated: boolean }
  readonly recording: Recording
  /** The base URL the gateway is given for callbacks (known once the HTTP service listens). */
  readonly publicUrl: () => string
  /** Settles with the number of unresolved creates found at start-up (they are being resolved by query). */
  readonly recovery: Promise<number>
}

/**
 * The merchant API (`/v1`) and the gateway callbacks (`/callbacks`): the gateway client (or the
 * built-in sandbox), the recording use cases, and the resolution of creates left open by a stop.
 */
export const startApiRole = async (ctx: ProcessContext): Promise<ApiRole> => {
  const { config, log, db, store } = ctx
  const tables = statusTables(config)
  const gateway = await ctx.gateway()
  const closers: Array<() => Promise<void>> = []
  const stopAll = async (): Promise<void> => {
    for (const close of closers.reverse()) await close()
  }
  try {
    const tokens = await apiTokens(config)
    const sessionSecret = await sessionSecretOf(config, dataPath(config, 'session-secret'))
    if (E.isLeft(sessionSecret)) throw new StartupError(sessionSecret.left)
    const openid = await openIdSettingsOf(config)
    if (E.isLeft(openid)) throw new StartupError(openid.left)
    // Known once the HTTP service listens (SATANG_HTTP_PORT may be 0); nothing is sent before that.
    const callbacks: { urls?: CallbackUrls; publicUrl?: string } = {}
    const stopping = new AbortController()
    const streamCache = makeAggregateStreamCache(config.SATANG_STREAM_CACHE_SIZE, config.SATANG_STREAM_CACHE_BYTES)
    registerStreamCacheMetrics(ctx.metrics, streamCache)
    const streamLocks = makePostgresStreamLocks({ pool: db.pool, log })
    closers.push(streamLocks.close)
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
      streamLocks,
      crashPoint: crashPointOf(config, log),
      stopping: stopping.signal,
      readModels: makeReadModelQueries(readModelsOf(db)),
      streamCache,
      quarantine: { eventsPerDay: config.SATANG_QUARANTINE_DAY_EVENTS, bytesPerDay: config.SATANG_QUARANTINE_DAY_BYTES, bodyBytes: config.SATANG_QUARANTINE_BODY_BYTES },
    }
    // Each use case a span of its own while tracing is on (src/adapters/telemetry).
    const recording = tracedRecording(makeRecording(deps))
    const matcher = makeTokenMatcher(tokens.tokens)

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
    const publicUrl = (): string => {
      if (callbacks.publicUrl === undefined) throw new Error('the public URL is known once the HTTP service listens')
      return callbacks.publicUrl
    }
    registerReconciliationMetrics(ctx.metrics, { db: db.pool, schema: readModelsOf(db).schema }, gateway.merchantId, log)
    const pastReads = asOfReads(store, readModelsOf(db), gateway.merchantId, deps.now)
    const acknowledge = (id: string, actor: string, reason: string, cause: Cause): Promise<UseCaseResult> =>
      acknowledgeBreak({ store, queries: makeReconciliationQueries(readModelsOf(db)), merchantId: gateway.merchantId, now: deps.now }, id, actor, reason, cause)
    return {
      role: 'api',
      routes: [
        registerV1Routes({ recording, tokens: matcher, asOf: pastReads }),
        registerLedgerRoutes({ readModels: readModelsOf(db), tokens: matcher, asOf: pastReads }),
        registerReconciliationRoutes({
          readModels: readModelsOf(db),
          merchantId: gateway.merchantId,
          tokens: matcher,
          acknowledge,
        }),
        registerCallbackRoutes({
          callbacks: recording.callbacks,
          now: deps.now,
          metrics: ctx.metrics,
          rateLimitPerMinute: config.SATANG_CALLBACK_RATE_LIMIT,
          maxFieldLength: config.SATANG_HTTP_MAX_FIELD_LENGTH,
        }),
        registerConsoleRoutes({
          readModels: readModelsOf(db),
          store,
          merchantId: gateway.merchantId,
          tokens: tokens.tokens,
          sessionSecret: sessionSecret.right.secret,
          acknowledge,
          now: deps.now,
          relayTopic: config.SATANG_KAFKA_TOPIC,
          people: { accounts: makePostgresConsoleAccounts(readModelsOf(db)), hasher: makeScryptPasswords(), openid: openid.right },
        }),
      ],
      checks: [],
      readiness: apiReadiness(store, db),
      listening: ({ port }) => {
        const base = (config.SATANG_PUBLIC_URL ?? `http://${urlHost(config.SATANG_HTTP_HOST)}:${String(port)}`).replace(/\/+$/, '')
        callbacks.urls = callbackUrlsOf(base)
        callbacks.publicUrl = base
        if (config.SATANG_GATEWAY_BASE_URL !== undefined && config.SATANG_PUBLIC_URL === undefined) {
          log.warn({ publicUrl: base }, 'SATANG_PUBLIC_URL is unset: the gateway is given callback URLs on the listen address, which it may not reach')
        }
      },
      summary: () => [],
      gateway: { description: gateway.description, merchantId: gateway.merchantId, ...(gateway.sandbox === undefined ? {} : { sandbox: gateway.sandbox }), ...(gateway.merchantKey === undefined ? {} : { merchantKey: gateway.merchantKey }) },
      tokens: { names: tokens.tokens.map((tk) => tk.name), ...(tokens.file === undefined ? {} : { file: tokens.file }) },
      ...(config.SATANG_SESSION_SECRET_FILE === undefined ? { sessionSecretFile: { path: sessionSecret.right.path, generated: sessionSecret.right.generated } } : {}),
      recording,
      publicUrl,
      recovery,
      stop: stopAll,
    }
  } catch (e) {
    await stopAll()
    throw e
  }
}
