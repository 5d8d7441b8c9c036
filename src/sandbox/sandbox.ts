import type { KeyObject } from 'node:crypto'
import formbody from '@fastify/formbody'
import * as E from 'fp-ts/lib/Either.js'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { satangCanonicalV1, type Canonicalizer } from '../domain/gateway/canonical.ts'
import type { Logger } from '../logger.ts'
import { makeSigner } from '../domain/gateway/signing.ts'
import { runBilling } from './billing.ts'
import { makeSandboxClock, type SandboxClock } from './clock.ts'
import type { SandboxContext, SandboxSettings } from './context.ts'
import { CONTROL_PREFIX, registerControlApi } from './control-api.ts'
import { reject, rejectionReply, SANDBOX_ERRORS } from './error-table.ts'
import { makeGatewayFaults, type GatewayFaults } from './gateway-faults.ts'
import { GATEWAY_PATH, registerGatewayRoute, sendEnvelope } from './gateway-route.ts'
import { newTraceId } from './ids.ts'
import { GATEWAY_PUBLIC_KEY_PATH, publicPemOf } from './keys.ts'
import { makeMerchantRegistry, type MerchantRegistry } from './merchants.ts'
import { DEFAULT_NOTIFIER_CONFIG, makeNotifier, type Notifier, type NotifierConfig } from './notifier.ts'
import { registerPageRoutes } from './pages/routes.ts'
import { makeRateLimiter, type RateLimit } from './rate-limit.ts'
import { openStateFile, type StateFile } from './state-file.ts'
import { makeSandboxStore, type SandboxStore } from './state.ts'
import { parsePromptPayId } from './thai-qr.ts'

export const DEFAULT_SANDBOX_PORT = 7070
export const DEFAULT_SANDBOX_HOST = '127.0.0.1'
/** Per `merchant_id`, on real time. The spec shows no rate limits; this is ours. */
export const DEFAULT_RATE_LIMIT: RateLimit = { perSecond: 200, burst: 400 }

export const DEFAULT_SETTINGS: SandboxSettings = {
  payImmediately: false,
  qrExpireSec: 900,
  linkExpireSec: 1800,
  promptPayId: '0812345678',
  failedStatus: 'PF',
}

export type SandboxConfig = {
  readonly host?: string
  /** 0: any free port (the handle's `url` tells which). */
  readonly port?: number
  /** The base URL of links when the sandbox is reached through another address (a proxy, a container). */
  readonly publicUrl?: string
  /** `merchant_id` → the public key that verifies its requests. More can be added through the control API. */
  readonly merchants: ReadonlyMap<string, KeyObject>
  readonly gatewayPrivateKey: KeyObject
  readonly canonicalizer?: Canonicalizer
  readonly settings?: Partial<SandboxSettings>
  /** `{ perSecond: 0 }` turns rate limiting off. */
  readonly rateLimit?: RateLimit
  readonly notifications?: Partial<NotifierConfig>
  /** Sign every answer of /gateway (header `sign`); on by default. */
  readonly signResponses?: boolean
  /** `--state FILE`. */
  readonly statePath?: string
  /** How often real time passing is checked for due subscription charges. */
  readonly billingIntervalMs?: number
}

export type SandboxDeps = {
  readonly log: Logger
  /** Default: a clock at real time. */
  readonly clock?: SandboxClock
  /** Default: a notifier signing with the gateway key and `config.notifications`. */
  readonly notifier?: Notifier
}

/** A running sandbox. */
export type Sandbox = {
  readonly app: FastifyInstance
  /** The base URL: `{url}/gateway` is the gateway endpoint. */
  readonly url: string
  readonly gatewayUrl: string
  readonly controlUrl: string
  readonly publicKeyUrl: string
  readonly publicKeyPem: string
  readonly clock: SandboxClock
  readonly notifier: Notifier
  readonly state: SandboxStore
  readonly merchants: MerchantRegistry
  readonly faults: GatewayFaults
  readonly context: SandboxContext
  /** Stops listening, abandons notifications in flight and saves the state file. */
  readonly close: () => Promise<void>
}

const urlHost = (host: string): string => {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1'
  return host.includes(':') ? `[${host}]` : host
}

const checkConfig = (config: SandboxConfig, settings: SandboxSettings): void => {
  const problems: string[] = []
  const id = parsePromptPayId(settings.promptPayId)
  if (E.isLeft(id)) problems.push(id.left)
  if (config.port !== undefined && (!Number.isInteger(config.port) || config.port < 0 || config.port > 65535)) problems.push('port must be 0 to 65535')
  if (config.publicUrl !== undefined && !/^https?:\/\/[^/]+$/.test(config.publicUrl.replace(/\/$/, ''))) problems.push('publicUrl must be an http(s) origin such as http://sandbox.test:7070')
  if (problems.length > 0) throw new Error(`sandbox configuration: ${problems.join('; ')}`)
}

/**
 * Builds and starts the gateway sandbox: `{url}/gateway` (the gateway spec's server side), the payer's
 * pages, and the control API under `/_sandbox`. Throws when it cannot listen or the state file is unusable.
 */
export const makeSandbox = async (deps: SandboxDeps, config: SandboxConfig): Promise<Sandbox> => {
  let settings: SandboxSettings = { ...DEFAULT_SETTINGS, ...config.settings }
  checkConfig(config, settings)
  const log = deps.log.child({ component: 'sandbox' })
  const canonicalizer = config.canonicalizer ?? satangCanonicalV1
  const signer = makeSigner(canonicalizer, config.gatewayPrivateKey)
  const clock = deps.clock ?? makeSandboxClock()
  const notifier = deps.notifier ?? makeNotifier({ signer, log, now: clock.now }, { ...DEFAULT_NOTIFIER_CONFIG, ...config.notifications })
  const store = makeSandboxStore()
  const merchants = makeMerchantRegistry(canonicalizer, config.merchants)
  const faults = makeGatewayFaults()
  const rateLimiter = makeRateLimiter(config.rateLimit ?? DEFAULT_RATE_LIMIT)
  const publicKeyPem = publicPemOf(config.gatewayPrivateKey)
  let baseUrl = config.publicUrl?.replace(/\/$/, '') ?? ''

  let notifierClosed = false
  const stateFile: StateFile | undefined = config.statePath === undefined ? undefined : await openStateFile({ store, clock, log }, config.statePath)
  const ctx: SandboxContext = {
    store,
    clock,
    signer,
    log,
    notify: (kind, url, fields) => {
      const send = (): void => {
        // A notification held for a write that only succeeds while closing is abandoned, as those in flight are.
        if (!notifierClosed) notifier.send({ kind, url, fields })
      }
      // A notification tells of state: it leaves only once that state is on disk, as answers do.
      if (stateFile === undefined) send()
      else stateFile.afterDurable(send)
    },
    baseUrl: () => baseUrl,
    settings: () => settings,
  }

  const httpLog: FastifyBaseLogger = deps.log.child({ component: 'sandbox-http' })
  const app = Fastify({ loggerInstance: httpLog, logController: new LogController({ disableRequestLogging: true }), forceCloseConnections: true })
  await app.register(formbody)

  app.setErrorHandler((error: unknown, request, reply) => {
    const status = typeof error === 'object' && error !== null && 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500
    const message = error instanceof Error ? error.message : 'internal error'
    if (status >= 500) log.error({ err: error, url: request.url }, 'sandbox request failed')
    if (request.url.split('?')[0] === GATEWAY_PATH) {
      const traceId = newTraceId()
      const { status: httpStatus, body } = rejectionReply(status < 500 ? reject('invalidParameter', message) : reject('internal'), traceId)
      return sendEnvelope({ signResponses: config.signResponses ?? true, signer }, reply, httpStatus, body)
    }
    return reply.code(status).send({ error: status < 500 ? message : SANDBOX_ERRORS.internal.message })
  })
  if (stateFile !== undefined) {
    const durable = stateFile.durable
    // An answer leaves only once the state it reports (or that a 4xx depends on) is on disk. A failed
    // write fails the answer (the error handler answers 500); a 5xx promises nothing, so it does not wait.
    app.addHook('onSend', async (_request, reply, payload) => {
      if (reply.statusCode < 500) await durable()
      return payload
    })
  }
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ error: `no route ${request.method} ${request.url.split('?')[0] ?? ''}; see ${CONTROL_PREFIX}` }))

  registerGatewayRoute(app, {
    ctx,
    merchants,
    rateLimit: rateLimiter.take,
    faults,
    signResponses: config.signResponses ?? true,
    signer,
  })
  registerControlApi(app, {
    ctx,
    clock,
    notifier,
    faults,
    merchants,
    rateLimiter,
    publicKeyPem,
    updateSettings: (s) => {
      settings = { ...settings, ...s }
      return settings
    },
    reset: () => {
      store.reset()
      notifier.reset()
      faults.clear()
    },
  })
  registerPageRoutes(app, ctx)
  app.get('/', async (_req, reply) => reply.redirect(CONTROL_PREFIX))
  app.get('/healthz', async () => ({ status: 'ok' }))

  const host = config.host ?? DEFAULT_SANDBOX_HOST
  try {
    await app.listen({ host, port: config.port ?? DEFAULT_SANDBOX_PORT })
  } catch (e) {
    await stateFile?.close()
    throw e
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : (config.port ?? DEFAULT_SANDBOX_PORT)
  if (baseUrl === '') baseUrl = `http://${urlHost(host)}:${String(port)}`

  const unsubscribe = clock.onAdvance(async (now) => {
    runBilling(ctx, now)
  })
  // Real time passes too: a charge falls due at midnight (Bangkok) without anyone moving the clock.
  const billingTimer = setInterval(() => runBilling(ctx, clock.now()), config.billingIntervalMs ?? 60_000)
  billingTimer.unref()
  // A subscription restored from the state file may have charges that fell due while the sandbox was down.
  runBilling(ctx, clock.now())

  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(billingTimer)
      unsubscribe()
      await app.close()
      try {
        // Notifications held until their state is on disk are handed to the notifier before it closes.
        await stateFile?.durable()
      } finally {
        notifierClosed = true
        await notifier.close()
        await stateFile?.close()
      }
    })()
    return closing
  }

  return {
    app,
    url: baseUrl,
    gatewayUrl: `${baseUrl}${GATEWAY_PATH}`,
    controlUrl: `${baseUrl}${CONTROL_PREFIX}`,
    publicKeyUrl: `${baseUrl}${GATEWAY_PUBLIC_KEY_PATH}`,
    publicKeyPem,
    clock,
    notifier,
    state: store,
    merchants,
    faults,
    context: ctx,
    close,
  }
}
