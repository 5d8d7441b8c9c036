import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Histogram, type Registry } from 'prom-client'
import type { Logger } from '../../logger.ts'
import { contextFromHeaders, enterSpan, SpanKind, SpanStatusCode, startSpan, tracingOn, type Span } from '../telemetry/tracing.ts'
import { ROOT_CONTEXT } from '@opentelemetry/api'

/** Paths an orchestrator or Prometheus asks many times a minute: no access-log line unless asked for. */
export const PROBE_PATHS: ReadonlyArray<string> = ['/livez', '/readyz', '/healthz', '/metrics']

/** Seconds: most answers take milliseconds; a create waits for the gateway (SATANG_GATEWAY_TIMEOUT_MS). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** The label of a request that matched no route: one series for all of them, whatever their path. */
export const UNMATCHED_ROUTE = 'unmatched'

export type RequestObserverOptions = {
  readonly log: Logger
  readonly metrics: Registry
  /** Log requests of `PROBE_PATHS` too (`SATANG_ACCESS_LOG_PROBES`). */
  readonly logProbes?: boolean
}

const routeOf = (request: FastifyRequest): string => request.routeOptions.url ?? UNMATCHED_ROUTE

const bytesOf = (reply: FastifyReply): number | undefined => {
  const length = reply.getHeader('content-length')
  const n = typeof length === 'string' ? Number(length) : typeof length === 'number' ? length : NaN
  return Number.isFinite(n) ? n : undefined
}

/**
 * Every request of a server: measured (`satang_http_request_duration_seconds` by method, route pattern
 * and status class), logged (one `info` line: method, route pattern, status, duration, request id,
 * bytes; never the query string, headers, body or client address) and, while tracing is on, a server
 * span that the handler and everything it calls run inside. A `traceparent` header is honoured on
 * `/v1` (the merchant's own trace continues); elsewhere (callbacks, console, probes) a request starts a
 * trace of its own.
 */
export const observeRequests = (app: FastifyInstance, options: RequestObserverOptions): void => {
  const log = options.log.child({ component: 'access' })
  const duration = new Histogram({
    name: 'satang_http_request_duration_seconds',
    help: 'time from receiving a request to sending its answer, by method, route pattern and status class (2xx, 4xx, …)',
    labelNames: ['method', 'route', 'status_class'],
    buckets: HTTP_BUCKETS,
    registers: [options.metrics],
  })
  const spans = new WeakMap<FastifyRequest, Span>()
  if (tracingOn()) {
    // A callback hook, first of all: the span is made current for the rest of the request's work.
    app.addHook('onRequest', (request, _reply, done) => {
      const route = routeOf(request)
      const parent = request.url.startsWith('/v1/') ? contextFromHeaders(request.headers) : ROOT_CONTEXT
      const span = startSpan(`${request.method} ${route}`, { kind: SpanKind.SERVER, parent, attributes: { 'http.request.method': request.method, 'http.route': route } })
      if (span !== undefined) {
        spans.set(request, span)
        enterSpan(span, parent)
      }
      done()
    })
    app.addHook('onRequestAbort', (request, done) => {
      const span = spans.get(request)
      spans.delete(request)
      span?.setStatus({ code: SpanStatusCode.ERROR, message: 'the client closed the connection before the answer' })
      span?.end()
      done()
    })
  }
  app.addHook('onResponse', (request, reply, done) => {
    const route = routeOf(request)
    const status = reply.statusCode
    const seconds = reply.elapsedTime / 1000
    duration.observe({ method: request.method, route, status_class: `${String(Math.floor(status / 100))}xx` }, seconds)
    const span = spans.get(request)
    if (span !== undefined) {
      spans.delete(request)
      span.setAttribute('http.response.status_code', status)
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
      span.end()
    }
    if (options.logProbes === true || !PROBE_PATHS.includes(route)) {
      const bytes = bytesOf(reply)
      log.info({ method: request.method, route, status, durationMs: Math.round(reply.elapsedTime * 10) / 10, requestId: request.id, ...(bytes === undefined ? {} : { bytes }) }, `${request.method} ${route} ${String(status)}`)
    }
    done()
  })
}
