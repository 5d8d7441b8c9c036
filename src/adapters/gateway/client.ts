import { setTimeout as sleepMs } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import { absurd, pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { GatewayOperation } from '../../domain/gateway/operation.ts'
import type { Logger } from '../../logger.ts'
import type { DecodeFailed, GatewayError, GatewayPort, GatewayResult, OutcomeUnknown, OutcomeUnknownReason, TransportFailed, WireFields } from '../../application/ports/gateway.ts'
import { merchantCalls } from './merchant-calls.ts'
import { prepareRequest, toHttpRequest, type PreparedRequest } from './request.ts'
import { interpretResponse, type Answer, type ResponseError } from './response.ts'
import { retrying, retryPolicyProblems, type RetryPolicy } from './retry.ts'
import type { Signer, Verifier } from '../../domain/gateway/signing.ts'
import type { BackgroundSigner } from './background-signer.ts'
import { makeHttpTransport, type HttpFailure, type HttpRequest } from './transport.ts'

export type GatewayClientDeps = {
  /** `{base_url}` of the spec; requests go to `{baseUrl}/gateway`. */
  readonly baseUrl: string
  readonly merchantSigner: Signer
  /** Signs on the thread pool instead (the same signatures as `merchantSigner`): for processes that send many requests. */
  readonly backgroundSigner?: BackgroundSigner
  /** Optional: verify a `sign` header on responses (the spec does not show response signatures). */
  readonly gatewayVerifier?: Verifier
  readonly log: Logger
  readonly timeouts: {
    /** Until the TCP (and TLS) connection is open. */
    readonly connectMs: number
    /** From the start of an attempt until its whole response is read. */
    readonly requestMs: number
  }
  /** For queries only; creates and commands are sent once. */
  readonly retry: RetryPolicy & {
    /** Gateway `code`s that mean "later" (e.g. rate limited): queries retry them. None by default. */
    readonly retriableCodes?: ReadonlyArray<number>
  }
  readonly random?: () => number
  readonly sleep?: (ms: number) => Promise<void>
  readonly maxResponseBytes?: number
}

export type CallOptions = {
  /** The `service` field, for operations whose codec does not set it. */
  readonly service?: string
}

export type { GatewayResult }

export type GatewayClient = GatewayPort & {
  /**
   * Validates, signs and sends one operation, retrying only queries. Never rejects: every expected
   * failure is a `GatewayError` left.
   */
  readonly call: <Req, Res>(
    operation: GatewayOperation<Req, Res>,
    request: NoInfer<Req>,
    options?: CallOptions,
  ) => TE.TaskEither<GatewayError, GatewayResult<Res>>
  /** Closes pooled connections. */
  readonly close: () => void
}

const ID_FIELDS = {
  merchant_id: 'merchantId',
  merchant_order_id: 'merchantOrderId',
  merchant_subscribe_id: 'merchantSubscribeId',
  merchant_refund_id: 'merchantRefundId',
} as const

type RequestIds = { -readonly [K in keyof typeof ID_FIELDS as (typeof ID_FIELDS)[K]]?: string }

const idsOf = (fields: WireFields): RequestIds => {
  const ids: RequestIds = {}
  for (const [wire, key] of Object.entries(ID_FIELDS)) {
    const value = fields[wire]
    if (typeof value === 'string') ids[key] = value
  }
  return ids
}

const transportFailed = (operation: string, f: HttpFailure): TransportFailed | DecodeFailed => {
  const base = { _tag: 'TransportFailed', operation, sent: f.sent, cause: f.cause } as const
  switch (f.kind) {
    case 'connect_timeout':
      return { ...base, reason: 'timeout', sent: false, retriable: true }
    case 'timeout':
      return { ...base, reason: 'timeout', retriable: true }
    case 'refused':
      return { ...base, reason: 'refused', retriable: true }
    case 'reset':
      return { ...base, reason: 'reset', retriable: true }
    case 'dns':
      // EAI_AGAIN is a resolver hiccup; ENOTFOUND is a wrong host name, which repeating will not fix.
      return { ...base, reason: 'dns', retriable: f.code === 'EAI_AGAIN' }
    case 'too_large':
      return {
        _tag: 'DecodeFailed',
        operation,
        violations: [{ path: '', rule: 'response body is larger than the configured maximum' }],
        httpStatus: f.status ?? 0,
        body: '',
        retriable: false,
      }
    default:
      return absurd(f.kind)
  }
}

const unknownReason = (e: ResponseError): OutcomeUnknownReason | undefined => {
  if (e._tag === 'DecodeFailed') return 'bad_response'
  if (e._tag !== 'TransportFailed' || !e.sent) return undefined
  return e.reason === 'timeout' || e.reason === 'reset' || e.reason === 'http_5xx' ? e.reason : undefined
}

/**
 * For a create, a failure after the request may have reached the gateway leaves the order (or
 * subscription) in an unknown state: the gateway may have created it. That is `OutcomeUnknown`, never
 * retried, resolved later by a query. A failure before the connection was open (DNS, ECONNREFUSED,
 * connect timeout) is definite: no byte of the request left this process, so the gateway cannot have
 * acted on it, and it stays a `TransportFailed`. A rejection with a gateway code is definite too.
 */
const classifyForCreate = (prepared: PreparedRequest, e: ResponseError): GatewayError => {
  const reason = unknownReason(e)
  if (reason === undefined || e._tag === 'GatewayRejected') return e
  const ids = idsOf(prepared.fields)
  const unknown: OutcomeUnknown = {
    _tag: 'OutcomeUnknown',
    operation: prepared.operation,
    service: prepared.service,
    ...(ids.merchantId === undefined ? {} : { merchantId: ids.merchantId }),
    ...(ids.merchantOrderId === undefined ? {} : { merchantOrderId: ids.merchantOrderId }),
    ...(ids.merchantSubscribeId === undefined ? {} : { merchantSubscribeId: ids.merchantSubscribeId }),
    reason,
    ...(e._tag === 'TransportFailed' && e.status !== undefined ? { status: e.status } : {}),
    ...(e.traceId === undefined ? {} : { traceId: e.traceId }),
    request: prepared.fields,
    retriable: false,
    cause: e,
  }
  return unknown
}

/** What may be logged about a failure: tags, codes, reasons and violation paths, never bodies. */
const loggable = (e: GatewayError): Record<string, unknown> => {
  switch (e._tag) {
    case 'ValidationFailed':
      return { outcome: e._tag, violations: e.violations }
    case 'GatewayRejected':
      return { outcome: e._tag, code: e.code, gatewayMessage: e.message, traceId: e.traceId, httpStatus: e.httpStatus }
    case 'TransportFailed':
      return { outcome: e._tag, reason: e.reason, status: e.status, sent: e.sent, traceId: e.traceId, err: e.cause }
    case 'DecodeFailed':
      return { outcome: e._tag, violations: e.violations, traceId: e.traceId, httpStatus: e.httpStatus }
    case 'OutcomeUnknown':
      return { outcome: e._tag, reason: e.reason, status: e.status, traceId: e.traceId }
    default:
      return absurd(e)
  }
}

const checkDeps = (deps: GatewayClientDeps): URL => {
  const problems = [...retryPolicyProblems(deps.retry)]
  for (const [name, ms] of Object.entries(deps.timeouts)) {
    if (!Number.isFinite(ms) || ms <= 0) problems.push(`timeouts.${name} must be a positive number of ms`)
  }
  const href = `${deps.baseUrl.replace(/\/+$/, '')}/gateway`
  const endpoint = URL.canParse(href) ? new URL(href) : undefined
  if (endpoint === undefined || (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:')) problems.push('baseUrl must be an http(s) URL')
  if (problems.length > 0 || endpoint === undefined) throw new Error(`gateway client: ${problems.join('; ')}`)
  return endpoint
}

/**
 * The HTTP client of the gateway (`{base_url}/gateway`), generic over `GatewayOperation`. Invalid
 * configuration is a defect and throws here, at composition time.
 */
export const makeGatewayClient = (deps: GatewayClientDeps): GatewayClient => {
  const endpoint = checkDeps(deps)
  const log = deps.log.child({ component: 'gateway-client' })
  const transport = makeHttpTransport({
    connectMs: deps.timeouts.connectMs,
    requestMs: deps.timeouts.requestMs,
    ...(deps.maxResponseBytes === undefined ? {} : { maxResponseBytes: deps.maxResponseBytes }),
  })
  const retryDeps = { random: deps.random ?? Math.random, sleep: deps.sleep ?? ((ms: number) => sleepMs(ms)) }
  const responseOptions = {
    retriableCodes: new Set(deps.retry.retriableCodes ?? []),
    ...(deps.gatewayVerifier === undefined ? {} : { verifier: deps.gatewayVerifier }),
  }

  const call = <Req, Res>(operation: GatewayOperation<Req, Res>, request: NoInfer<Req>, options?: CallOptions): TE.TaskEither<GatewayError, GatewayResult<Res>> => {
    const prepared = prepareRequest(operation, request, options?.service)
    if (E.isLeft(prepared)) {
      return () => {
        log.warn({ operation: operation.name, ...loggable(prepared.left) }, 'gateway request invalid, not sent')
        return Promise.resolve(prepared)
      }
    }
    const p = prepared.right
    // The call's child logger is made only when a line is written (a busy caller logs at warn).
    let child: Logger | undefined
    const callLog = (): Logger => (child ??= log.child({ operation: operation.name, service: p.service, ...idsOf(p.fields) }))
    // Signed once: every attempt of a query sends the same bytes.
    const signed = async (): Promise<HttpRequest> =>
      deps.backgroundSigner === undefined ? toHttpRequest(endpoint, p, deps.merchantSigner) : toHttpRequest(endpoint, p, { signature: await deps.backgroundSigner.sign(p.fields) })
    // Only queries are repeated: a create may have taken effect (see classifyForCreate) and a command
    // changes gateway state, so neither is re-sent automatically.
    const policy = operation.retry === 'query' ? deps.retry : { ...deps.retry, maxAttempts: 1 }

    return async () => {
      const http = await signed()
      const startedAt = new Date().toISOString()
      const start = performance.now()
      const elapsed = (): number => Math.round(performance.now() - start)
      let attempts = 0

      const attempt = (n: number): TE.TaskEither<GatewayError, Answer<Res>> => {
        attempts = n
        const attemptStart = performance.now()
        return pipe(
          transport.send(http),
          TE.mapLeft((f): ResponseError => transportFailed(operation.name, f)),
          TE.flatMapEither((res) => interpretResponse(operation, res, responseOptions)),
          TE.mapLeft((e): GatewayError => (operation.retry === 'create' ? classifyForCreate(p, e) : e)),
          TE.tapError((e) => {
            if (log.isLevelEnabled('debug')) callLog().debug({ attempt: n, durationMs: Math.round(performance.now() - attemptStart), ...loggable(e) }, 'gateway attempt failed')
            return TE.right(undefined)
          }),
        )
      }

      return pipe(
        retrying(
          policy,
          retryDeps,
          (e) => e.retriable,
          attempt,
          (e, n, delayMs) => callLog().info({ attempt: n, delayMs, ...loggable(e) }, 'retrying gateway query'),
          (e) => (e._tag === 'GatewayRejected' || e._tag === 'TransportFailed' ? e.retryAfterMs : undefined),
        ),
        TE.bimap(
          (e) => {
            callLog().warn({ attempts, durationMs: elapsed(), ...loggable(e) }, 'gateway call failed')
            return e
          },
          (a): GatewayResult<Res> => {
            const durationMs = elapsed()
            if (log.isLevelEnabled('info')) callLog().info({ attempts, durationMs, traceId: a.traceId, httpStatus: a.httpStatus, outcome: 'success' }, 'gateway call succeeded')
            return { data: a.data, message: a.message, traceId: a.traceId, request: p.fields, httpStatus: a.httpStatus, timing: { startedAt, durationMs, attempts } }
          },
        ),
      )()
    }
  }

  return { call, close: transport.close, ...merchantCalls(call) }
}
