import type { JsonObject } from '../events/envelope.ts'
import type { PaymentAnswer, RefundAnswer } from './answer.ts'
import type { PaymentItem, RefundItem, StatusView } from './item.ts'

/* What each side says about an item, as the break keeps it (JSON: satang as digit strings). */

const status = (s: StatusView | null): JsonObject | null => (s === null ? null : { code: s.code, final: s.final, outcome: s.outcome, known: s.known })

export const paymentSatangView = (i: PaymentItem): JsonObject => ({
  merchant_order_id: i.merchantOrderId,
  gateway_order_id: i.gatewayOrderId,
  request_phase: i.phase,
  status: status(i.status),
  status_source: i.statusSource,
  amount_satang: i.amount.toString(),
  currency: i.currency,
  refunded_satang: i.refunded.toString(),
  refund_ids: [...i.refundIds],
  created_at: i.createdAt.toISOString(),
})

export const refundSatangView = (i: RefundItem): JsonObject => ({
  merchant_refund_id: i.merchantRefundId,
  merchant_order_id: i.merchantOrderId,
  tracked_by: i.trackedBy,
  status: status(i.status),
  status_source: i.statusSource,
  amount_satang: i.recorded?.amount.toString() ?? null,
  currency: i.recorded?.currency ?? i.orderCurrency,
  order_known: i.orderKnown,
})

const notAnswered = (a: { readonly _tag: 'NotFound'; readonly code: number; readonly message: string; readonly traceId: string } | { readonly _tag: 'Failed'; readonly reason: string }): JsonObject =>
  a._tag === 'NotFound' ? { answered: true, found: false, code: a.code, message: a.message, trace_id: a.traceId } : { answered: false, reason: a.reason }

export const paymentGatewayView = (a: PaymentAnswer): JsonObject =>
  a._tag === 'Found'
    ? {
        answered: true,
        found: true,
        order_id: a.gatewayOrderId,
        status: status(a.status),
        order_amount: a.amountText,
        amount_satang: a.amount?.toString() ?? null,
        currency: a.currency,
        complete_time: a.completeTime?.toISOString() ?? null,
        trace_id: a.traceId,
      }
    : notAnswered(a)

export const refundGatewayView = (a: RefundAnswer): JsonObject =>
  a._tag === 'Found'
    ? {
        answered: true,
        found: true,
        refund_order_id: a.refundOrderId,
        merchant_order_id: a.merchantOrderId,
        status: status(a.status),
        refund_amount: a.amountText,
        amount_satang: a.amount?.toString() ?? null,
        currency: a.currency,
        trace_id: a.traceId,
      }
    : notAnswered(a)
