import * as E from 'fp-ts/lib/Either.js'
import type { PaymentQueryRequest } from '../domain/gateway/payment-query.ts'
import type { RefundQueryRequest } from '../domain/gateway/refund-query.ts'
import type { SandboxContext } from './context.ts'
import { reject, type SandboxRejection } from './error-table.ts'
import { paymentQueryData, refundRecord } from './wire.ts'

/** Endpoint 2: the order by `merchant_order_id`, with `complete_time` once paid. */
export const queryPayment = (ctx: SandboxContext, req: PaymentQueryRequest): E.Either<SandboxRejection, Record<string, unknown>> => {
  const order = ctx.store.orderOf(req.merchant_id, req.merchant_order_id)
  return order === undefined ? E.left(reject('notFound', `no order with merchant_order_id ${req.merchant_order_id}`)) : E.right(paymentQueryData(order))
}

/** Endpoint 3: the Refund record by `merchant_refund_id`. */
export const queryRefund = (ctx: SandboxContext, req: RefundQueryRequest): E.Either<SandboxRejection, Record<string, unknown>> => {
  const refund = ctx.store.refundOf(req.merchant_id, req.merchant_refund_id)
  return refund === undefined ? E.left(reject('notFound', `no refund with merchant_refund_id ${req.merchant_refund_id}`)) : E.right(refundRecord(refund))
}
