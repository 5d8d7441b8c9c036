import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { describeHandleError } from '../../application/command-handler.ts'
import { unmatchedCallbacksStream } from '../../application/callbacks.ts'
import { load, orderKind } from '../../application/streams.ts'
import { bangkokDateOf, formatCalendarDate } from '../../domain/bangkok-time.ts'
import { satangOf } from '../../domain/events/gateway-values.ts'
import { decodeDomainEvent } from '../../domain/events/registry.ts'
import { orderStreamName } from '../../domain/order/index.ts'
import { breakOf, matched, unchecked } from '../../domain/reconciliation/comparison.ts'
import type { ItemRecord } from '../../domain/reconciliation/run.ts'
import { paymentGatewayView } from '../../domain/reconciliation/views.ts'
import { askPayment } from './ask-gateway.ts'
import { ItemStoreFailed } from './check-payment.ts'
import type { ReconcileDeps, RunContext } from './context.ts'
import { itemRecordOf, unmatchedRef } from './item-record.ts'

/** A verified PAYMENT notification about an order satang never created, as the unmatched stream keeps it. */
export type UnmatchedPayment = { readonly merchantOrderId: string; readonly day: string; readonly receivedAt: Date; readonly amount: bigint; readonly currency: string | null }

const Payload = t.type({ merchant_order_id: t.string, order_amount: t.string, order_currency: t.string })

/** The verified payment notifications of the merchant's unmatched stream, first receipt per order. */
export const unmatchedPayments = async (deps: Pick<ReconcileDeps, 'store' | 'merchantId'>): Promise<ReadonlyArray<UnmatchedPayment>> => {
  const read = await deps.store.readStream(unmatchedCallbacksStream(deps.merchantId))()
  if (E.isLeft(read)) throw new ItemStoreFailed(`the unmatched callbacks stream: event store ${read.left.operation} failed`)
  const byOrder = new Map<string, UnmatchedPayment>()
  for (const item of read.right) {
    if (E.isLeft(item) || item.right.type !== 'NotificationReceived') continue
    const e = decodeDomainEvent(item.right.type, item.right.schemaVersion, item.right.data)
    if (E.isLeft(e) || e.right.type !== 'NotificationReceived' || e.right.data.kind !== 'PAYMENT') continue
    const payload = Payload.decode(e.right.data.payload)
    if (E.isLeft(payload) || byOrder.has(payload.right.merchant_order_id)) continue
    const receivedAt = e.right.data.receivedAt
    byOrder.set(payload.right.merchant_order_id, {
      merchantOrderId: payload.right.merchant_order_id,
      day: formatCalendarDate(bangkokDateOf(receivedAt)),
      receivedAt,
      amount: satangOf(payload.right.order_amount) ?? 0n,
      currency: payload.right.order_currency,
    })
  }
  return [...byOrder.values()]
}

/**
 * `missing_internal`: the gateway called back about an order satang never created. Once satang has the
 * order (the merchant created it after all) the item is consistent. The gateway's current view of the
 * order is queried for the break (the callback itself is the evidence, kept in the unmatched stream).
 */
export const checkUnmatched = async (run: RunContext, u: UnmatchedPayment): Promise<ItemRecord> => {
  const stream = orderStreamName(run.merchantId, u.merchantOrderId)
  const loaded = await load(run.deps, orderKind, stream)()
  if (E.isLeft(loaded)) throw new ItemStoreFailed(`order ${u.merchantOrderId}: ${describeHandleError(loaded.left, () => 'rejected')}`)
  const ref = unmatchedRef(u.merchantOrderId)
  const satangView = { merchant_order_id: u.merchantOrderId, order: null, notification_received_at: u.receivedAt.toISOString(), notified_amount_satang: u.amount.toString(), notified_currency: u.currency }
  if (loaded.right.state._tag === 'Order') {
    return itemRecordOf(run, { ref, day: u.day, amount: u.amount, comparison: matched, satangView, gatewayView: {}, evidence: { traceId: null, observationKey: null } })
  }
  const asked = await askPayment(run.deps, u.merchantOrderId)
  const a = asked.answer
  const comparison =
    a._tag === 'Failed'
      ? unchecked(a.reason, u.amount)
      : breakOf('missing_internal', a._tag === 'Found' ? (a.amount ?? u.amount) : u.amount, `the gateway sent a verified PAYMENT notification for order ${u.merchantOrderId}, which satang never created`)
  return itemRecordOf(run, { ref, day: u.day, amount: u.amount, comparison, satangView, gatewayView: paymentGatewayView(a), evidence: { traceId: asked.traceId, observationKey: null } })
}
