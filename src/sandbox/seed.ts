import * as E from 'fp-ts/lib/Either.js'
import { formatAmount, parseAmount } from '../domain/money.ts'
import { conflict, type ActionError } from './action-error.ts'
import { nowOf, type SandboxContext } from './context.ts'
import { gatewayBillId } from './ids.ts'
import type { SandboxOrder } from './state.ts'

/** An order to put in the sandbox as if another system had created (and perhaps paid) it. */
export type SeededOrder = { readonly merchantId: string; readonly merchantOrderId: string; readonly amount: string; readonly currency: string; readonly status: string }

/**
 * Creates orders in bulk, silently (no notification), without a signed request each: for benchmarks
 * and reconciliation tests that need many orders at the gateway. All or none: a merchant_order_id
 * already there refuses the whole batch.
 */
export const seedOrders = (ctx: SandboxContext, orders: ReadonlyArray<SeededOrder>): E.Either<ActionError, ReadonlyArray<string>> => {
  const taken = orders.find((o) => ctx.store.orderOf(o.merchantId, o.merchantOrderId) !== undefined)
  if (taken !== undefined) return E.left(conflict(`merchant_order_id ${taken.merchantOrderId} already exists`))
  const now = nowOf(ctx)
  const ids: string[] = []
  for (const o of orders) {
    const amount = parseAmount(o.amount)
    if (E.isLeft(amount)) return E.left({ status: 400, message: `order_amount of ${o.merchantOrderId}: ${amount.left.join('; ')}` })
    const orderId = gatewayBillId(now.instant, ctx.store.nextSequence())
    const order: SandboxOrder = {
      kind: 'checkout',
      merchantId: o.merchantId,
      merchantOrderId: o.merchantOrderId,
      orderId,
      status: o.status,
      amount: formatAmount(amount.right),
      requestedAmount: formatAmount(amount.right),
      currency: o.currency,
      description: 'seeded',
      createTime: now.text,
      createdAtMs: now.instant.getTime(),
      ...(o.status === 'PS' ? { completeTime: now.text } : {}),
    }
    ctx.store.putOrder(order)
    ids.push(orderId)
  }
  return E.right(ids)
}
