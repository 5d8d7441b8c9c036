/**
 * The gateway as the application needs it (the gateway spec's merchant operations), and how a call
 * fails. The signing HTTP client in src/adapters/gateway implements it; tests use fakes.
 */
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { CheckoutApplyRequest, CheckoutApplyResponse } from '../../domain/gateway/checkout.ts'
import type { DirectPaymentResponse } from '../../domain/gateway/direct-payment-response.ts'
import type { DirectPaymentRequest } from '../../domain/gateway/direct-payment.ts'
import type { PaymentQueryRequest, PaymentQueryResponse } from '../../domain/gateway/payment-query.ts'
import type { RefundQueryRequest, RefundRecord } from '../../domain/gateway/refund-query.ts'
import type {
  SubscriptionCancelRequest,
  SubscriptionCreateRequest,
  SubscriptionCreateResponse,
  SubscriptionUpdateRequest,
  SubscriptionUpdateResponse,
} from '../../domain/gateway/subscription.ts'
import { absurd } from 'fp-ts/lib/function.js'
import type { Violation } from '../../domain/violations.ts'
import { formatViolations } from '../../domain/violations.ts'

/** The wire fields of one request, exactly as they were signed and sent (no `sign` header). */
export type WireFields = Readonly<Record<string, unknown>>

/** The request broke the operation's request codec; nothing was sent. */
export type ValidationFailed = {
  readonly _tag: 'ValidationFailed'
  readonly operation: string
  readonly violations: ReadonlyArray<Violation>
  readonly retriable: false
}

/** The gateway answered with a business error: an envelope whose `code` is not 200000. */
export type GatewayRejected = {
  readonly _tag: 'GatewayRejected'
  readonly operation: string
  readonly code: number
  readonly message: string
  readonly traceId: string
  readonly httpStatus: number
  /** True only for codes configured as transient (`retry.retriableCodes`, e.g. rate limiting). */
  readonly retriable: boolean
  /** The answer's `Retry-After`, in ms, when it sent one: a retry waits at least this long. */
  readonly retryAfterMs?: number
}

export type TransportReason = 'timeout' | 'refused' | 'reset' | 'http_5xx' | 'http_status' | 'dns'

/** No usable answer arrived: the network failed, or the HTTP status said so without an envelope. */
export type TransportFailed = {
  readonly _tag: 'TransportFailed'
  readonly operation: string
  readonly reason: TransportReason
  /** HTTP status, for `http_5xx` and `http_status`. */
  readonly status?: number
  /**
   * Whether request bytes may have reached the gateway (the connection was established). `false` means
   * the gateway certainly did not see the request (DNS failure, connection refused, connect timeout).
   */
  readonly sent: boolean
  readonly traceId?: string
  readonly retriable: boolean
  /** The answer's `Retry-After` (HTTP 429, 503), in ms. */
  readonly retryAfterMs?: number
  readonly cause?: unknown
}

/** The answer arrived but is not a valid envelope, its `data` broke the response codec, or its signature failed. */
export type DecodeFailed = {
  readonly _tag: 'DecodeFailed'
  readonly operation: string
  readonly violations: ReadonlyArray<Violation>
  readonly traceId?: string
  readonly httpStatus: number
  /** The response body (cut to a few KiB). It may hold payer data: never log it. */
  readonly body: string
  readonly retriable: false
}

export type OutcomeUnknownReason = 'timeout' | 'reset' | 'http_5xx' | 'bad_response'

/**
 * A create whose request may have reached the gateway but whose result is unknown: it timed out, the
 * connection was cut after it was sent, the gateway answered 5xx, or the answer was unreadable. It is
 * never re-sent; resolve it with a query by `merchantOrderId` / `merchantSubscribeId` (ARCHITECTURE.md).
 */
export type OutcomeUnknown = {
  readonly _tag: 'OutcomeUnknown'
  readonly operation: string
  readonly service: string
  readonly merchantId?: string
  readonly merchantOrderId?: string
  readonly merchantSubscribeId?: string
  readonly reason: OutcomeUnknownReason
  readonly status?: number
  readonly traceId?: string
  /** The wire fields that were sent. May hold payer data: never log it whole. */
  readonly request: WireFields
  readonly retriable: false
  readonly cause: TransportFailed | DecodeFailed
}

export type GatewayError = ValidationFailed | GatewayRejected | TransportFailed | DecodeFailed | OutcomeUnknown

/** One line for humans and logs. Carries ids, codes and reasons; never request or response bodies. */
export const describeGatewayError = (e: GatewayError): string => {
  switch (e._tag) {
    case 'ValidationFailed':
      return `${e.operation}: invalid request, not sent:\n${formatViolations(e.violations)}`
    case 'GatewayRejected':
      return `${e.operation}: gateway rejected the request: ${e.code} ${e.message} (trace_id ${e.traceId})`
    case 'TransportFailed':
      return `${e.operation}: transport failed: ${e.reason}${e.status === undefined ? '' : ` (HTTP ${e.status})`}`
    case 'DecodeFailed':
      return `${e.operation}: unreadable gateway response (HTTP ${e.httpStatus}):\n${formatViolations(e.violations)}`
    case 'OutcomeUnknown':
      return `${e.operation}: outcome unknown (${e.reason}) for ${e.merchantOrderId ?? e.merchantSubscribeId ?? 'request'}; resolve it by query`
    default:
      return absurd(e)
  }
}

/** A successful gateway call. */
export type GatewayResult<Res> = {
  /** The envelope's `data`, decoded with the operation's response codec (`null` when it has none). */
  readonly data: Res
  readonly message: string
  readonly traceId: string
  /** The wire fields exactly as signed and sent (the signature itself is not included). */
  readonly request: WireFields
  readonly httpStatus: number
  readonly timing: {
    readonly startedAt: string
    /** From the first attempt's start to the last answer, backoff included. */
    readonly durationMs: number
    readonly attempts: number
  }
}

/** A request without the fields the client fills in itself: `version`, and `service` where it is fixed. */
type Fields<R, Filled extends string> = Omit<R, Filled>

export type GatewayCall<Res> = TE.TaskEither<GatewayError, GatewayResult<Res>>

/** One method per operation a merchant calls; each adds `version` (and `service` where it is fixed). */
export type GatewayPort = {
  /** Endpoint 1, for all 11 direct services: `service` names the channel. */
  readonly createDirectPayment: (request: Fields<DirectPaymentRequest, 'version'>) => GatewayCall<DirectPaymentResponse>
  readonly queryPayment: (request: Fields<PaymentQueryRequest, 'version' | 'service'>) => GatewayCall<PaymentQueryResponse>
  readonly queryRefund: (request: Fields<RefundQueryRequest, 'version' | 'service'>) => GatewayCall<RefundRecord>
  readonly applyCheckout: (request: Fields<CheckoutApplyRequest, 'version' | 'service'>) => GatewayCall<CheckoutApplyResponse>
  readonly createSubscription: (request: Fields<SubscriptionCreateRequest, 'version' | 'service'>) => GatewayCall<SubscriptionCreateResponse>
  readonly updateSubscription: (request: Fields<SubscriptionUpdateRequest, 'version' | 'service'>) => GatewayCall<SubscriptionUpdateResponse>
  readonly cancelSubscription: (request: Fields<SubscriptionCancelRequest, 'version' | 'service'>) => GatewayCall<null>
}
