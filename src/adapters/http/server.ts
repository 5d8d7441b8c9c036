import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import formbody from '@fastify/formbody'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { Registry, collectDefaultMetrics } from 'prom-client'
import type { Logger } from '../../logger.ts'
import type { TokenMatcher } from './api-tokens.ts'
import { registerErrorShapes, sendError } from './errors.ts'
import { DEFAULT_MAX_FIELD_LENGTH, registerFieldLimits, registerJsonBodies } from './json-body.ts'
import { registerOpenApi, registerOpenApiRoute } from './openapi.ts'
import { lazyRequestLogger } from './request-logger.ts'
import { observeRequests } from './request-observer.ts'
import { MAX_PATH_PARAM_LENGTH, frameworkErrors, registerRoutingErrors } from './routing.ts'

/** A dependency `/healthz` reports on: a name and a probe that rejects or returns an error text when down. */
export type HealthCheck = { readonly name: string; readonly check: () => Promise<string | null> }

export type HttpServerDeps = {
  readonly log: Logger
  readonly checks: ReadonlyArray<HealthCheck>
  /** What `/readyz` checks: whether each role of this process can do its work now (`/healthz` keeps `checks`). */
  readonly readiness?: ReadonlyArray<HealthCheck>
  /** The reverse proxies whose X-Forwarded-For/-Proto are believed (`SATANG_TRUST_PROXY`): addresses or CIDRs; none = ignored. */
  readonly trustProxy?: ReadonlyArray<string>
  readonly metrics: Registry
  readonly version: string
  /** Route groups mounted beside `/healthz` and `/metrics`: the merchant API (`/v1`) and `/callbacks`. */
  readonly routes?: ReadonlyArray<(app: FastifyInstance) => void>
  /** Largest request body accepted, in bytes (`SATANG_HTTP_BODY_LIMIT`). Default 256 KiB. */
  readonly bodyLimit?: number
  /** Longest string or key of a body or query, in characters (`SATANG_HTTP_MAX_FIELD_LENGTH`). Default 4096. */
  readonly maxFieldLength?: number
  /** Where `/metrics` is served: here (the default), or only by a server of `makeMetricsServer` (`SATANG_METRICS_PORT`). */
  readonly metricsHere?: boolean
  /** The bearer token `/metrics` requires (`SATANG_METRICS_TOKEN_FILE`); none = it answers anyone. */
  readonly metricsToken?: TokenMatcher
  /** Access-log lines for `/livez`, `/readyz`, `/healthz` and `/metrics` too (`SATANG_ACCESS_LOG_HEALTH`). */
  readonly accessLogHealth?: boolean
}

/** Default largest request body, in bytes (`SATANG_HTTP_BODY_LIMIT`). */
export const DEFAULT_BODY_LIMIT = 256 * 1024

/**
 * prom-client's default gauges whose names end in `_total`: a gauge may not (promtool), and the same
 * figures are there by type (`nodejs_active_handles{type}`, `nodejs_active_requests{type}`, `nodejs_active_resources{type}`).
 */
const DEFAULT_GAUGES_NAMED_LIKE_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

/**
 * A prom-client registry with the process metrics under their standard names (`process_*`, `nodejs_*`,
 * as the stock Node.js dashboards expect); adapters register their own (`satang_*`) on it.
 */
export const makeMetricsRegistry = (): Registry => {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  for (const name of DEFAULT_GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name)
  return registry
}

/** A route the server serves: its method and URL pattern. */
export type RegisteredRoute = { readonly method: string; readonly url: string }

const registered = new WeakMap<FastifyInstance, RegisteredRoute[]>()

/** Every route registered on a server made by `makeHttpServer` (HEAD routes fastify adds itself left out). */
export const registeredRoutes = (app: FastifyInstance): ReadonlyArray<RegisteredRoute> => registered.get(app) ?? []

/** What a stop waits for: the requests admitted before it began that are still running, and when the last one ended. */
type StopState = {
  stopping: boolean
  /** Requests being answered: what they are, and whether they were admitted (came before the stop) or refused. */
  readonly inFlight: Map<ServerResponse, { readonly what: string; readonly admitted: boolean }>
  /** When an admitted request last ended during the stop; undefined while none has. */
  lastAdmittedEnd: number | undefined
  wake: () => void
}

const stopStates = new WeakMap<FastifyInstance, StopState>()

/**
 * Once a stop began: new requests are answered 503 `unavailable` (`retriable: true`) with
 * `Connection: close`, and every response closes its connection, so a client learns it must go
 * elsewhere instead of finding its connection reset.
 */
const registerStopping = (app: FastifyInstance): StopState => {
  const state: StopState = { stopping: false, inFlight: new Map(), lastAdmittedEnd: undefined, wake: () => undefined }
  app.server.on('request', (req: { method?: string; url?: string }, res: ServerResponse) => {
    const admitted = !state.stopping
    state.inFlight.set(res, { what: `${req.method ?? '?'} ${(req.url ?? '').split('?')[0] ?? ''}`, admitted })
    res.once('close', () => {
      state.inFlight.delete(res)
      if (admitted && state.stopping) state.lastAdmittedEnd = Date.now()
      state.wake()
    })
  })
  app.addHook('onRequest', async (request, reply) => {
    if (!state.stopping) return undefined
    // The probes answer for themselves while stopping: /readyz 503 (take me out of the balancer), /livez 200.
    if (request.routeOptions.url === '/readyz' || request.routeOptions.url === '/livez') return undefined
    return sendError(reply.header('connection', 'close'), 503, { error: 'unavailable', message: 'satang is stopping: this request was not processed; send it again (to another instance, or once satang is back)', retriable: true })
  })
  stopStates.set(app, state)
  return state
}

/**
 * How long the listening socket stays open after the last request admitted before the stop ended: its
 * client got its answer with `Connection: close` and may come back at once, to be answered 503 rather
 * than refused.
 */
const STOP_LINGER_MS = 1_000

/**
 * Stops a server of `makeHttpServer` without resetting a connection: the listening socket stays open
 * while requests in flight finish (their effects recorded, their answers sent with `Connection: close`)
 * and new ones are answered 503 `retriable`; then it closes (idle connections with it). Requests still
 * running after `deadlineMs` are abandoned (their connections closed), with a log line naming them;
 * resolves with what they were (`METHOD /path`).
 */
export const stopHttpServer = async (app: FastifyInstance, opts: { readonly deadlineMs: number; readonly log: Logger }): Promise<ReadonlyArray<string>> => {
  const state = stopStates.get(app)
  if (state === undefined || !app.server.listening) {
    await app.close()
    return []
  }
  state.stopping = true
  const admitted = (): number => [...state.inFlight.values()].filter((r) => r.admitted).length
  const deadline = Date.now() + opts.deadlineMs
  await new Promise<void>((resolve) => {
    const check = (): void => {
      const now = Date.now()
      const drained = admitted() === 0 && (state.lastAdmittedEnd === undefined || now - state.lastAdmittedEnd >= STOP_LINGER_MS)
      if (!drained && now < deadline) return
      clearInterval(timer)
      state.wake = () => undefined
      resolve()
    }
    const timer = setInterval(check, 50)
    state.wake = check
    check()
  })
  const abandoned = [...state.inFlight.values()].filter((r) => r.admitted)
  if (abandoned.length > 0) {
    opts.log.warn(
      { requests: abandoned.slice(0, 20).map((r) => r.what), inFlight: abandoned.length, deadlineMs: opts.deadlineMs },
      `stop: ${String(abandoned.length)} request(s) still in flight after ${String(opts.deadlineMs)} ms (SATANG_SHUTDOWN_TIMEOUT_MS) abandoned; their connections are closed`,
    )
    app.server.closeAllConnections()
  }
  // Idle keep-alive connections close now (a client that sends on one meanwhile was answered 503 with
  // Connection: close): app.close() alone would wait for them up to the keep-alive timeout.
  app.server.closeIdleConnections()
  // Refused requests still being answered finish (their connections close after the answer); idle ones close now.
  await app.close()
  return abandoned.map((r) => r.what)
}

/** How long one readiness probe may take before it counts as failing. */
const PROBE_TIMEOUT_MS = 3_000

/** Runs the checks at once, each bounded by PROBE_TIMEOUT_MS: `ok` or the reason, by name. */
const runChecks = async (checks: ReadonlyArray<HealthCheck>): Promise<ReadonlyArray<readonly [string, string]>> =>
  Promise.all(
    checks.map(async (c) => {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`no answer within ${String(PROBE_TIMEOUT_MS / 1000)} s`), PROBE_TIMEOUT_MS)
      })
      const problem = await Promise.race([
        c.check().then(
          (p) => p,
          (e: unknown) => (e instanceof Error ? e.message : 'failed'),
        ),
        timeout,
      ])
      clearTimeout(timer)
      return [c.name, problem === null ? 'ok' : problem] as const
    }),
  )

/**
 * `/livez`: the process is alive and its event loop answers (nothing else is asked, so an orchestrator
 * does not restart satang because a dependency is down). `/readyz`: every role of this process can do
 * its work now; 503 names each failing check and why, and from the moment a stop begins it says so.
 */
const registerProbes = (app: FastifyInstance, stop: StopState, checks: ReadonlyArray<HealthCheck>): void => {
  app.get('/livez', async (_req, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }))
  app.get('/readyz', async (_req, reply) => {
    reply.header('cache-control', 'no-store')
    if (stop.stopping) {
      return reply.code(503).send({ status: 'unavailable', checks: { shutdown: 'satang is stopping (SIGTERM): send requests to another instance' }, failing: [{ check: 'shutdown', reason: 'satang is stopping (SIGTERM): send requests to another instance' }] })
    }
    const results = await runChecks(checks)
    const failing = results.filter(([, r]) => r !== 'ok').map(([check, reason]) => ({ check, reason }))
    return reply.code(failing.length === 0 ? 200 : 503).send({ status: failing.length === 0 ? 'ok' : 'unavailable', checks: Object.fromEntries(results), failing })
  })
}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i

/** `/metrics`, behind the bearer token of `token` when there is one. */
const registerMetricsRoute = (app: FastifyInstance, metrics: Registry, token: TokenMatcher | undefined): void => {
  const unauthorized = (reply: FastifyReply, message: string): FastifyReply =>
    sendError(reply.header('www-authenticate', 'Bearer realm="satang-metrics"'), 401, { error: 'unauthorized', message })
  const authorized = (request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    if (token === undefined) return undefined
    const header = request.headers.authorization
    if (header === undefined || header === '') return unauthorized(reply, 'an Authorization: Bearer <token> header is required (the token of SATANG_METRICS_TOKEN_FILE)')
    const presented = BEARER.exec(header)?.[1]
    if (presented === undefined) return unauthorized(reply, 'the Authorization header must be Bearer <token>')
    return token(presented) === undefined ? unauthorized(reply, 'the bearer token is not valid') : undefined
  }
  app.get('/metrics', async (request, reply) => authorized(request, reply) ?? reply.type(metrics.contentType).send(await metrics.metrics()))
}

/** The server of `/metrics` alone, on a port of its own (`SATANG_METRICS_PORT`); every other path is 404. */
export const makeMetricsServer = (deps: { readonly log: Logger; readonly metrics: Registry; readonly token?: TokenMatcher }): FastifyInstance => {
  const logger: FastifyBaseLogger = deps.log.child({ component: 'metrics-http' })
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    // request.log made when a request first logs (request-logger.ts).
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: 1024,
    requestTimeout: 30_000,
    forceCloseConnections: 'idle',
    frameworkErrors,
  })
  registerErrorShapes(app, 1024)
  registerRoutingErrors(app)
  registerMetricsRoute(app, deps.metrics, deps.token)
  return app
}

/** The HTTP service: `/healthz`, `/metrics`, and the route groups of `deps.routes` (`/v1`, `/callbacks`). */
export const makeHttpServer = (deps: HttpServerDeps): FastifyInstance => {
  const logger: FastifyBaseLogger = deps.log.child({ component: 'http' })
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    // request.log made when a request first logs (request-logger.ts).
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: deps.bodyLimit ?? DEFAULT_BODY_LIMIT,
    // Callbacks and the API are small requests; a stalled client must not keep a connection forever.
    requestTimeout: 30_000,
    forceCloseConnections: 'idle',
    // While closing, a request is answered by the stop hook (503 in the API's shape, `retriable`), not fastify's own 503.
    return503OnClosing: false,
    // Request ids become correlation ids of events and callback ids of refused callbacks: unique across restarts.
    genReqId: () => randomUUID(),
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors,
    // X-Forwarded-For/-Proto only from the configured proxies (request.ip, request.protocol); from anyone else they are ignored.
    trustProxy: deps.trustProxy === undefined || deps.trustProxy.length === 0 ? false : [...deps.trustProxy],
  })
  observeRequests(app, { log: deps.log, metrics: deps.metrics, logProbes: deps.accessLogHealth === true })
  const stop = registerStopping(app)
  const routes: RegisteredRoute[] = []
  registered.set(app, routes)
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url })
  })
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
    // An answer given while stopping closes its connection: the client's next request goes elsewhere.
    if (stop.stopping) reply.header('connection', 'close')
  })
  // Redirect forms of the gateway arrive as application/x-www-form-urlencoded.
  void app.register(formbody)
  registerErrorShapes(app, deps.bodyLimit ?? DEFAULT_BODY_LIMIT)
  registerJsonBodies(app)
  registerRoutingErrors(app)
  registerFieldLimits(app, deps.maxFieldLength ?? DEFAULT_MAX_FIELD_LENGTH)

  app.get('/healthz', async (_req, reply) => {
    const results = await Promise.all(
      deps.checks.map(async (c) => {
        const problem = await c.check().then(
          (p) => p,
          (e: unknown) => (e instanceof Error ? e.message : 'failed'),
        )
        return [c.name, problem === null ? 'ok' : problem] as const
      }),
    )
    const ok = results.every(([, r]) => r === 'ok')
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', version: deps.version, checks: Object.fromEntries(results) })
  })

  registerProbes(app, stop, deps.readiness ?? [])

  if (deps.metricsHere !== false) registerMetricsRoute(app, deps.metrics, deps.metricsToken)

  // The OpenAPI document of `/v1` (`GET /v1/openapi.json`) is built from the routes added once the plugin has loaded.
  registerOpenApi(app, deps.version)
  app.after(() => {
    registerOpenApiRoute(app)
    for (const register of deps.routes ?? []) register(app)
  })

  return app
}
