import type { StatusOutcome, StatusClassification } from '../gateway/statuses.ts'
import type { Satang } from '../money.ts'
import type { Order, PaymentRequestPhase } from '../order/state.ts'
import type { Refund } from '../refund/state.ts'

/*
 * An item of a reconciliation run as satang holds it, read from its aggregate's state (the fold of its
 * stream, never a read model that may lag): an order (checked with a payment query) or a refund
 * (checked with a refund query).
 */

/** A status as the comparison needs it. `known`: the status table knows the code (an unknown code is non-final and needs review). */
export type StatusView = { readonly code: string; readonly final: boolean; readonly outcome: StatusOutcome; readonly known: boolean }

export const statusViewOf = (c: StatusClassification): StatusView => ({ code: c.code, final: c.final && !c.needsReview, outcome: c.outcome, known: !c.needsReview })

export type PaymentItem = {
  readonly kind: 'payment'
  readonly merchantId: string
  readonly merchantOrderId: string
  readonly stream: string
  readonly amount: Satang
  readonly currency: string
  readonly phase: PaymentRequestPhase['phase']
  readonly createdAt: Date
  /** Since when satang believes the gateway has the order: the create's answer, or the first observation; the create's request otherwise. */
  readonly since: Date
  readonly status: StatusView | null
  /** Where the status came from (`api_response`, `notification`, `query`) and when. */
  readonly statusSource: string | null
  readonly statusObservedAt: Date | null
  readonly gatewayOrderId: string | null
  /** Satang of the order's refunds recorded (RefundRecorded), and their ids. */
  readonly refunded: bigint
  readonly refundIds: ReadonlyArray<string>
}

const sinceOf = (o: Order): Date => {
  const r = o.request
  switch (r.phase) {
    case 'accepted':
      return r.acceptedAt
    case 'requested':
      return r.requestedAt
    case 'outcome_unknown':
      return r.since
    case 'resolved_by_observation':
      return r.resolvedAt
    case 'failed':
      return r.failedAt
    case 'not_requested':
      return o.status?.observedAt ?? o.order.createdAt
  }
}

/** The payment item of an order, with the refunds recorded against it. */
export const paymentItemOf = (stream: string, o: Order, refunds: { readonly total: bigint; readonly ids: ReadonlyArray<string> }): PaymentItem => ({
  kind: 'payment',
  merchantId: o.order.merchantId,
  merchantOrderId: o.order.merchantOrderId,
  stream,
  amount: o.order.amount,
  currency: o.order.currency,
  phase: o.request.phase,
  createdAt: o.order.createdAt,
  since: sinceOf(o),
  status: o.status === null ? null : statusViewOf(o.status.classification),
  statusSource: o.status?.source ?? null,
  statusObservedAt: o.status?.observedAt ?? null,
  gatewayOrderId: o.gatewayOrderId,
  refunded: refunds.total,
  refundIds: refunds.ids,
})

export type RefundItem = {
  readonly kind: 'refund'
  readonly merchantId: string
  readonly merchantRefundId: string
  readonly merchantOrderId: string
  readonly stream: string
  readonly trackedAt: Date
  readonly trackedBy: string
  readonly status: StatusView | null
  readonly statusSource: string | null
  readonly statusObservedAt: Date | null
  /** The amount and currency recorded once the refund succeeded (RefundRecorded). */
  readonly recorded: { readonly amount: Satang; readonly currency: string } | null
  /** Whether satang has the refunded order (created through satang). */
  readonly orderKnown: boolean
  /** The order's currency when satang has the order. */
  readonly orderCurrency: string | null
}

export const refundItemOf = (stream: string, r: Refund, order: { readonly known: boolean; readonly currency: string | null }): RefundItem => ({
  kind: 'refund',
  merchantId: r.merchantId,
  merchantRefundId: r.merchantRefundId,
  merchantOrderId: r.merchantOrderId,
  stream,
  trackedAt: r.trackedAt,
  trackedBy: r.trackedBy,
  status: r.status === null ? null : statusViewOf(r.status.classification),
  statusSource: r.status?.source ?? null,
  statusObservedAt: r.status?.observedAt ?? null,
  recorded: r.recorded === null ? null : { amount: r.recorded.amount, currency: r.recorded.currency },
  orderKnown: order.known,
  orderCurrency: order.currency,
})
