import * as E from 'fp-ts/lib/Either.js'
import { formatAmount, parseAmount } from '../domain/money.ts'
import { conflict, notFound, type ActionError } from './action-error.ts'
import { nowOf, type SandboxContext } from './context.ts'
import type { SandboxOrder } from './state.ts'
import { paymentNotification } from './wire.ts'

/*
 * What happens to an order after it was created: the payer pays or fails (on a sandbox page, or the
 * control API says so), or the control API forces a gateway-side status or amount to provoke
 * reconciliation breaks. Paying and failing notify `notify_url`; forcing is silent unless asked.
 */

export const PAID = 'PS'

const findOrder = (ctx: SandboxContext, orderId: string): E.Either<ActionError, SandboxOrder> => {
  const order = ctx.store.order(orderId)
  return order === undefined ? E.left(notFound(`no order with order_id ${orderId}`)) : E.right(order)
}

const notifyPayment = (ctx: SandboxContext, order: SandboxOrder): void => {
  if (order.notifyUrl !== undefined) ctx.notify('PAYMENT', order.notifyUrl, paymentNotification(order))
}

/** The product and method the payer chose on the checkout page. */
export type PaymentChoice = { readonly productCode?: string; readonly paymentMethod?: string }

/** Marks the order paid (`PS`, `complete_time` now) and sends the payment notification. */
export const payOrder = (ctx: SandboxContext, orderId: string, choice: PaymentChoice = {}): E.Either<ActionError, SandboxOrder> => {
  const found = findOrder(ctx, orderId)
  if (E.isLeft(found)) return found
  const order = found.right
  if (order.status === PAID) return E.left(conflict(`order ${orderId} is already paid`))
  const paid: SandboxOrder = {
    ...order,
    status: PAID,
    completeTime: nowOf(ctx).text,
    ...(choice.productCode === undefined ? {} : { productCode: choice.productCode }),
    ...(choice.paymentMethod === undefined ? {} : { paymentMethod: choice.paymentMethod }),
  }
  ctx.store.putOrder(paid)
  notifyPayment(ctx, paid)
  return E.right(paid)
}

/** Marks the payment failed (status `settings.failedStatus`, default `PF`) and notifies. A paid order cannot fail. */
export const failOrder = (ctx: SandboxContext, orderId: string): E.Either<ActionError, SandboxOrder> => {
  const found = findOrder(ctx, orderId)
  if (E.isLeft(found)) return found
  const order = found.right
  if (order.status === PAID) return E.left(conflict(`order ${orderId} is already paid`))
  const failed: SandboxOrder = { ...order, status: ctx.settings().failedStatus }
  ctx.store.putOrder(failed)
  notifyPayment(ctx, failed)
  return E.right(failed)
}

export type ForceOrder = { readonly status?: string; readonly amount?: string; readonly notify?: boolean }

/**
 * Sets what the gateway says about an order, whatever the payer did: any 2-character status and any
 * valid amount (queries and later notifications carry them). `PS` sets `complete_time` if absent.
 */
export const forceOrder = (ctx: SandboxContext, orderId: string, force: ForceOrder): E.Either<ActionError, SandboxOrder> => {
  const found = findOrder(ctx, orderId)
  if (E.isLeft(found)) return found
  const order = found.right
  const amount = force.amount === undefined ? undefined : parseAmount(force.amount)
  if (amount !== undefined && E.isLeft(amount)) return E.left({ status: 400, message: `order_amount ${amount.left.join('; ')}` })
  const forced: SandboxOrder = {
    ...order,
    ...(force.status === undefined ? {} : { status: force.status }),
    ...(amount === undefined ? {} : { amount: formatAmount(amount.right) }),
    ...(force.status === PAID && order.completeTime === undefined ? { completeTime: nowOf(ctx).text } : {}),
  }
  ctx.store.putOrder(forced)
  if (force.notify === true) notifyPayment(ctx, forced)
  return E.right(forced)
}
