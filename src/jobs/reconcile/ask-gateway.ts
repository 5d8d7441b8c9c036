import * as E from 'fp-ts/lib/Either.js'
import { describeGatewayError, type GatewayError } from '../../application/ports/gateway.ts'
import type { PaymentQueryResponse } from '../../domain/gateway/payment-query.ts'
import type { RefundRecord } from '../../domain/gateway/refund-query.ts'
import { paymentAnswerOf, refundAnswerOf, type NotFound, type PaymentAnswer, type QueryFailed, type RefundAnswer } from '../../domain/reconciliation/answer.ts'
import type { ReconcileDeps } from './context.ts'

/** The query's answer for the comparison, and the record as the gateway sent it (for the aggregate). */
export type Asked<A, Raw> = { readonly answer: A; readonly raw: Raw | null; readonly traceId: string | null }

/** A failed query as the comparison sees it: "not found" (a configured code), or no answer. */
const notAnswered = (deps: Pick<ReconcileDeps, 'notFoundCodes'>, e: GatewayError): NotFound | QueryFailed =>
  e._tag === 'GatewayRejected' && deps.notFoundCodes.includes(e.code)
    ? { _tag: 'NotFound', code: e.code, message: e.message, traceId: e.traceId }
    : { _tag: 'Failed', reason: describeGatewayError(e).replaceAll('\n', '; ') }

/** Endpoint 2 for one order (the client retries with jitter and obeys Retry-After). */
export const askPayment = async (deps: ReconcileDeps, merchantOrderId: string): Promise<Asked<PaymentAnswer, PaymentQueryResponse>> => {
  const r = await deps.gateway.queryPayment({ merchant_id: deps.merchantId, merchant_order_id: merchantOrderId })()
  if (E.isLeft(r)) {
    const answer = notAnswered(deps, r.left)
    return { answer, raw: null, traceId: answer._tag === 'NotFound' ? answer.traceId : null }
  }
  return { answer: paymentAnswerOf(r.right.data, deps.statusTables.payment, r.right.traceId), raw: r.right.data, traceId: r.right.traceId }
}

/** Endpoint 3 for one refund. */
export const askRefund = async (deps: ReconcileDeps, merchantRefundId: string): Promise<Asked<RefundAnswer, RefundRecord>> => {
  const r = await deps.gateway.queryRefund({ merchant_id: deps.merchantId, merchant_refund_id: merchantRefundId })()
  if (E.isLeft(r)) {
    const answer = notAnswered(deps, r.left)
    return { answer, raw: null, traceId: answer._tag === 'NotFound' ? answer.traceId : null }
  }
  return { answer: refundAnswerOf(r.right.data, deps.statusTables.refund, r.right.traceId), raw: r.right.data, traceId: r.right.traceId }
}
