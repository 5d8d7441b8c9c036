import { randomUUID } from 'node:crypto'
import formbody from '@fastify/formbody'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { Registry, collectDefaultMetrics } from 'prom-client'
import type { Logger } from '../../logger.ts'
import { registerErrorShapes } from './errors.ts'
import { DEFAULT_MAX_FIELD_LENGTH, registerFieldLimits, registerJsonBodies } from './json-body.ts'
import { registerOpenApi, registerOpenApiRoute } from './openapi.ts'
import { MAX_PATH_PARAM_LENGTH, frameworkErrors, registerRoutingErrors } from './routing.ts'

/** A dependency `/healthz` reports on: a name and a probe that rejects or returns an error text when down. */
export type HealthCheck = { readonly name: string; readonly check: () => Promise<string | null> }

export type HttpServerDeps = {
  readonly log: Logger
  readonly checks: ReadonlyArray<HealthCheck>
  readonly metrics: Registry
  readonly version: string
  /** Route groups mounted beside `/healthz` and `/metrics`: the merchant API (`/v1`) and `/callbacks`. */
  readonly routes?: ReadonlyArray<(app: FastifyInstance) => void>
  /** Largest request body accepted, in bytes (`SATANG_HTTP_BODY_LIMIT`). Default 256 KiB. */
  readonly bodyLimit?: number
  /** Longest string or key of a body or query, in characters (`SATANG_HTTP_MAX_FIELD_LENGTH`). Default 4096. */
  readonly maxFieldLength?: number
}

/** Default largest request body, in bytes (`SATANG_HTTP_BODY_LIMIT`). */
export const DEFAULT_BODY_LIMIT = 256 * 1024

/** A prom-client registry with the process metrics; adapters register their own metrics on it. */
export const makeMetricsRegistry = (): Registry => {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'satang_' })
  return registry
}

/** A route the server serves: its method and URL pattern. */
export type RegisteredRoute = { readonly method: string; readonly url: string }

const registered = new WeakMap<FastifyInstance, RegisteredRoute[]>()

/** Every route registered on a server made by `makeHttpServer` (HEAD routes fastify adds itself left out). */
export const registeredRoutes = (app: FastifyInstance): ReadonlyArray<RegisteredRoute> => registered.get(app) ?? []

/** The HTTP service: `/healthz`, `/metrics`, and the route groups of `deps.routes` (`/v1`, `/callbacks`). */
export const makeHttpServer = (deps: HttpServerDeps): FastifyInstance => {
  const logger: FastifyBaseLogger = deps.log.child({ component: 'http' })
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.bodyLimit ?? DEFAULT_BODY_LIMIT,
    // Callbacks and the API are small requests; a stalled client must not keep a connection forever.
    requestTimeout: 30_000,
    forceCloseConnections: 'idle',
    // Request ids become correlation ids of events and callback ids of refused callbacks: unique across restarts.
    genReqId: () => randomUUID(),
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors,
  })
  const routes: RegisteredRoute[] = []
  registered.set(app, routes)
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url })
  })
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
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

  app.get('/metrics', async (_req, reply) => reply.type(deps.metrics.contentType).send(await deps.metrics.metrics()))

  // The OpenAPI document of `/v1` (`GET /v1/openapi.json`) is built from the routes added once the plugin has loaded.
  registerOpenApi(app, deps.version)
  app.after(() => {
    registerOpenApiRoute(app)
    for (const register of deps.routes ?? []) register(app)
  })

  return app
}
