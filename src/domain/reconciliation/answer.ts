import { gatewayInstantOf, presentText, satangOf } from '../events/gateway-values.ts'
import type { PaymentQueryResponse } from '../gateway/payment-query.ts'
import type { RefundRecord } from '../gateway/refund-query.ts'
import { classifyPaymentStatus, classifyRefundStatus, type StatusTable } from '../gateway/statuses.ts'
import type { Satang } from '../money.ts'
import { statusViewOf, type StatusView } from './item.ts'

/*
 * What the gateway answered to the query of one item: the record it holds, "not found" (one of the
 * configured not-found codes), or no usable answer after the client's retries.
 */

export type NotFound = { readonly _tag: 'NotFound'; readonly code: number; readonly message: string; readonly traceId: string }

/** No answer: the item stays unchecked (never assumed matched). `reason` is one line for people. */
export type QueryFailed = { readonly _tag: 'Failed'; readonly reason: string }

export type PaymentRecordAnswer = {
  readonly _tag: 'Found'
  readonly status: StatusView
  /** Null when `order_amount` is not an amount (then it mismatches whatever satang holds). */
  readonly amount: Satang | null
  readonly amountText: string
  readonly currency: string
  readonly merchantOrderId: string
  readonly gatewayOrderId: string
  /** The gateway's `due_date` (the link's expiry) when it sends one. */
  readonly dueAt: Date | null
  readonly completeTime: Date | null
  readonly traceId: string | null
}

export type PaymentAnswer = PaymentRecordAnswer | NotFound | QueryFailed

export type RefundRecordAnswer = {
  readonly _tag: 'Found'
  readonly status: StatusView
  readonly amount: Satang | null
  readonly amountText: string
  readonly currency: string
  readonly merchantOrderId: string
  readonly refundOrderId: string
  readonly traceId: string | null
}

export type RefundAnswer = RefundRecordAnswer | NotFound | QueryFailed

export const paymentAnswerOf = (r: PaymentQueryResponse, table: StatusTable, traceId: string | null): PaymentRecordAnswer => ({
  _tag: 'Found',
  status: statusViewOf(classifyPaymentStatus(table, r.order_status)),
  amount: satangOf(r.order_amount),
  amountText: r.order_amount,
  currency: r.order_currency,
  merchantOrderId: r.merchant_order_id,
  gatewayOrderId: r.order_id,
  dueAt: gatewayInstantOf(presentText(r.due_date)),
  completeTime: gatewayInstantOf(presentText(r.complete_time)),
  traceId,
})

export const refundAnswerOf = (r: RefundRecord, table: StatusTable, traceId: string | null): RefundRecordAnswer => ({
  _tag: 'Found',
  status: statusViewOf(classifyRefundStatus(table, r.refund_status)),
  amount: satangOf(r.refund_amount),
  amountText: r.refund_amount,
  currency: r.refund_currency,
  merchantOrderId: r.merchant_order_id,
  refundOrderId: r.refund_order_id,
  traceId,
})
