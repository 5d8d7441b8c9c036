import type { DiscrepancyObservedData } from '../events/common/discrepancy-observed.ts'
import type { ObservationSource } from '../events/codecs.ts'
import type { StatusClassification } from '../gateway/statuses.ts'
import type { Satang } from '../money.ts'
import { isPaid, type OrderState } from '../order/state.ts'
import type { RefundOrderContext } from './commands.ts'
import type { TrackedBy } from './events/refund-tracked.ts'

export type RefundStatus = {
  readonly code: string
  readonly classification: StatusClassification
  readonly source: ObservationSource
  readonly observedAt: Date
}

export type NoRefund = { readonly _tag: 'NoRefund' }

export type Refund = {
  readonly _tag: 'Refund'
  readonly merchantId: string
  readonly merchantRefundId: string
  readonly merchantOrderId: string
  readonly trackedBy: TrackedBy
  readonly trackedAt: Date
  readonly refundOrderId: string | null
  /** A final status never regresses. */
  readonly status: RefundStatus | null
  /** Set once, by RefundRecorded. */
  readonly recorded: { readonly amount: Satang; readonly currency: string; readonly recordedAt: Date } | null
  readonly observationKeys: ReadonlySet<string>
  readonly discrepancies: ReadonlyArray<DiscrepancyObservedData>
  readonly unclassifiedStatuses: ReadonlyArray<string>
}

export type RefundState = NoRefund | Refund

export const initialRefundState: RefundState = { _tag: 'NoRefund' }

export const recordedAmountOf = (s: RefundState): Satang | null => (s._tag === 'Refund' && s.recorded !== null ? s.recorded.amount : null)

export const needsReview = (s: RefundState): boolean => s._tag === 'Refund' && (s.discrepancies.length > 0 || s.unclassifiedStatuses.length > 0)

/**
 * The order context of a refund: what the order paid and what its other refunds already took back.
 * `otherRefunds` are the states of the order's refunds other than the one being decided.
 */
export const refundOrderContext = (order: OrderState, otherRefunds: ReadonlyArray<RefundState>): RefundOrderContext => ({
  paidAmount: order._tag === 'Order' && isPaid(order) ? order.order.amount : null,
  currency: order._tag === 'Order' ? order.order.currency : null,
  refundedByOthers: otherRefunds.reduce((sum, r) => sum + (recordedAmountOf(r) ?? 0n), 0n),
})
