import { Histogram, type Registry } from 'prom-client'
import type { GatewayError, GatewayPort } from '../../application/ports/gateway.ts'
import { inSpan, SpanKind, SpanStatusCode, tracingOn } from './tracing.ts'

/** Seconds: a gateway call takes tens to hundreds of ms; a timeout is SATANG_GATEWAY_TIMEOUT_MS. */
const GATEWAY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** `success`, or how the call failed: `rejected`, `transport_failed`, `decode_failed`, `outcome_unknown`, `validation_failed`. */
export const gatewayOutcome = (e: GatewayError | undefined): string => {
  if (e === undefined) return 'success'
  switch (e._tag) {
    case 'GatewayRejected':
      return 'rejected'
    case 'TransportFailed':
      return 'transport_failed'
    case 'DecodeFailed':
      return 'decode_failed'
    case 'OutcomeUnknown':
      return 'outcome_unknown'
    case 'ValidationFailed':
      return 'validation_failed'
    default:
      return e satisfies never
  }
}

const OPERATIONS = ['createDirectPayment', 'queryPayment', 'queryRefund', 'applyCheckout', 'createSubscription', 'updateSubscription', 'cancelSubscription'] as const satisfies ReadonlyArray<keyof GatewayPort>

/** snake_case operation names for labels and span names: `create_direct_payment`, `query_payment`, … */
const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * The gateway client with every call measured (`satang_gateway_call_duration_seconds`, by operation and
 * outcome, retries and backoff included) and, while tracing is on, a client span per call carrying the
 * gateway's own `trace_id` (`satang.gateway.trace_id`), to find the call in the gateway's logs.
 */
export const observedGateway = <G extends GatewayPort>(gateway: G, registry: Registry): G => {
  const duration = new Histogram({
    name: 'satang_gateway_call_duration_seconds',
    help: 'time of one gateway call, retries of queries included, by operation and outcome (success, rejected, transport_failed, decode_failed, outcome_unknown, validation_failed)',
    labelNames: ['operation', 'outcome'],
    buckets: GATEWAY_BUCKETS,
    registers: [registry],
  })
  const traced = tracingOn()
  const wrap = <K extends (typeof OPERATIONS)[number]>(name: K): GatewayPort[K] => {
    const operation = snake(name)
    const call = gateway[name] as (request: unknown) => ReturnType<GatewayPort[K]>
    const run = (request: unknown) => async () => {
      const end = duration.startTimer({ operation })
      const result = await call(request)()
      const error = result._tag === 'Left' ? result.left : undefined
      end({ outcome: gatewayOutcome(error) })
      return result
    }
    const wrapped = traced
      ? (request: unknown) => () =>
          inSpan(`gateway ${operation}`, { kind: SpanKind.CLIENT, attributes: { 'satang.gateway.operation': operation } }, async (span) => {
            const result = await run(request)()
            const error = result._tag === 'Left' ? result.left : undefined
            const traceId = error === undefined ? (result._tag === 'Right' ? result.right.traceId : undefined) : 'traceId' in error ? error.traceId : undefined
            span?.setAttribute('satang.gateway.outcome', gatewayOutcome(error))
            if (traceId !== undefined) span?.setAttribute('satang.gateway.trace_id', traceId)
            if (error !== undefined) span?.setStatus({ code: SpanStatusCode.ERROR, message: gatewayOutcome(error) })
            return result
          })
      : run
    return wrapped as unknown as GatewayPort[K]
  }
  const out: Record<string, unknown> = { ...gateway }
  for (const name of OPERATIONS) out[name] = wrap(name)
  return out as G
}
