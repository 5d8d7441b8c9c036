import * as E from 'fp-ts/lib/Either.js'
import { formatAmount, parseAmount, type Satang } from '../domain/money.ts'
import { badRequest, conflict, notFound, type ActionError } from './action-error.ts'
import { nowOf, type SandboxContext } from './context.ts'
import { gatewayBillId } from './ids.ts'
import { PAID } from './payments.ts'
import type { SandboxRefund } from './state.ts'
import { refundNotification } from './wire.ts'

/** The refund status the sandbox gives: refund succeeded (the only refund status the spec shows). */
export const REFUND_SUCCEEDED = 'RS'

export type CreateRefund = {
  readonly orderId: string
  readonly merchantRefundId: string
  readonly amount: string
  readonly reason?: string
  /** Where the refund notification goes; default the order's `notify_url`. */
  readonly notifyUrl?: string
}

const satangOf = (text: string): Satang => {
  const parsed = parseAmount(text)
  // Every amount in the store was formatted by the sandbox itself.
  if (E.isLeft(parsed)) throw new Error(`stored amount ${text} is not an amount`)
  return parsed.right
}

/** What is left to refund of an order: its amount minus every refund so far. */
export const refundableOf = (ctx: SandboxContext, orderId: string, amount: string): bigint => {
  const refunded = ctx.store.refundsOfOrder(orderId).reduce((sum, r) => sum + satangOf(r.amount), 0n)
  return satangOf(amount) - refunded
}

/**
 * Refund creation is not in the spec: the control API creates refunds of a paid order, never more
 * than what is left to refund. The refund succeeds at once (`RS`) and is notified.
 */
export const createRefund = (ctx: SandboxContext, input: CreateRefund): E.Either<ActionError, SandboxRefund> => {
  const order = ctx.store.order(input.orderId)
  if (order === undefined) return E.left(notFound(`no order with order_id ${input.orderId}`))
  if (order.status !== PAID) return E.left(conflict(`order ${order.orderId} is ${order.status}; only a paid (PS) order can be refunded`))
  if (ctx.store.refundOf(order.merchantId, input.merchantRefundId) !== undefined) {
    return E.left(conflict(`merchant_refund_id ${input.merchantRefundId} already exists for merchant ${order.merchantId}`))
  }
  const amount = parseAmount(input.amount)
  if (E.isLeft(amount)) return E.left(badRequest(`refund_amount ${amount.left.join('; ')}`))
  if (amount.right === 0n) return E.left(badRequest('refund_amount must be more than 0'))
  const left = refundableOf(ctx, order.orderId, order.amount)
  if (amount.right > left) {
    return E.left(conflict(`refund_amount ${formatAmount(amount.right)} is more than the ${formatAmount(left)} left to refund of order ${order.orderId}`))
  }
  const now = nowOf(ctx)
  const notifyUrl = input.notifyUrl ?? order.notifyUrl
  const refund: SandboxRefund = {
    merchantId: order.merchantId,
    merchantRefundId: input.merchantRefundId,
    merchantOrderId: order.merchantOrderId,
    orderId: order.orderId,
    refundOrderId: gatewayBillId(now.instant, ctx.store.nextSequence()),
    amount: formatAmount(amount.right),
    currency: order.currency,
    status: REFUND_SUCCEEDED,
    createTime: now.text,
    completeTime: now.text,
    ...(input.reason === undefined ? {} : { reason: input.reason }),
    ...(notifyUrl === undefined ? {} : { notifyUrl }),
  }
  ctx.store.putRefund(refund)
  if (notifyUrl !== undefined) ctx.notify('REFUND', notifyUrl, refundNotification(refund))
  return E.right(refund)
}
