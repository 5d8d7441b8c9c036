import type { DomainEvent } from '../../src/domain/events/registry.ts'
import { redactPayerData } from '../../src/domain/events/redaction.ts'
import { classifyRefundStatus, DEFAULT_REFUND_STATUS_TABLE } from '../../src/domain/gateway/statuses.ts'
import { fold, isPaid, type OrderEvent } from '../../src/domain/order/index.ts'
import { refundRecorded, refundStatusObserved, refundStreamName, refundTracked } from '../../src/domain/refund/index.ts'
import {
  subscriptionActivated,
  subscriptionChargeFailed,
  subscriptionCharged,
  subscriptionCreated,
  subscriptionRequested,
  subscriptionStreamName,
} from '../../src/domain/subscription/index.ts'
import { at, MERCHANT_ID, sat } from '../domain/support/values.ts'

type Item = { readonly stream: string; readonly event: DomainEvent }

/**
 * Refund and subscription streams to go with generated orders, so that every projection has work:
 * a refund of part of every third paid order, and a handful of monthly subscriptions with charges
 * (one failing now and then). Each stream's events are in order; callers interleave the streams.
 */
export const otherStreamsForProjections = (orders: ReadonlyArray<{ readonly stream: string; readonly events: ReadonlyArray<OrderEvent> }>, opts: { readonly subscriptions?: number; readonly refundEvery?: number; readonly subscriptionPrefix?: string } = {}): Item[][] => {
  const out: Item[][] = []
  let paidSeen = 0
  for (const o of orders) {
    const s = fold(o.events)
    if (s._tag !== 'Order' || !isPaid(s)) continue
    paidSeen += 1
    if (paidSeen % (opts.refundEvery ?? 3) !== 0) continue
    const merchantRefundId = `RF-${s.order.merchantOrderId}`
    const stream = refundStreamName(MERCHANT_ID, merchantRefundId)
    const amount = sat(s.order.amount / 2n)
    const refundOrderId = `R${s.gatewayOrderId ?? '0'}`
    const key = `notification:${merchantRefundId}:RS`
    out.push([
      { stream, event: refundTracked.make({ merchantId: MERCHANT_ID, merchantRefundId, merchantOrderId: s.order.merchantOrderId, trackedBy: 'merchant', trackedAt: at(30) }) },
      {
        stream,
        event: refundStatusObserved.make({
          merchantId: MERCHANT_ID,
          merchantRefundId,
          merchantOrderId: s.order.merchantOrderId,
          gatewayOrderId: s.gatewayOrderId ?? '0',
          refundOrderId,
          statusCode: 'RS',
          classification: classifyRefundStatus(DEFAULT_REFUND_STATUS_TABLE, 'RS'),
          amount,
          currency: 'THB',
          completeTime: at(40),
          source: 'notification',
          observedAt: at(41),
          observationKey: key,
          traceId: null,
        }),
      },
      {
        stream,
        event: refundRecorded.make({
          merchantId: MERCHANT_ID,
          merchantRefundId,
          merchantOrderId: s.order.merchantOrderId,
          refundOrderId,
          amount,
          currency: 'THB',
          completeTime: at(40),
          source: 'notification',
          observedAt: at(41),
          observationKey: key,
        }),
      },
    ])
  }
  for (let i = 1; i <= (opts.subscriptions ?? 8); i++) {
    const merchantSubscribeId = `SUB-${opts.subscriptionPrefix ?? ''}${String(i)}`
    const stream = subscriptionStreamName(MERCHANT_ID, merchantSubscribeId)
    const recurringBillId = `RB${String(1000 + i)}`
    const plan = {
      planName: 'Monthly beans',
      planDesc: null,
      intervalType: 'MONTHLY' as const,
      interval: 1,
      totalTerms: 12,
      billingAmount: sat(29_900n + BigInt(i)),
      currency: 'THB',
      retry: 'Y' as const,
      startDate: '2026-01-31',
      startDateRequested: '2026-01-31',
    }
    const events: Item[] = [
      { stream, event: subscriptionRequested.make({ requestSeq: 1, operation: 'create', merchantId: MERCHANT_ID, merchantSubscribeId, plan, merchantUrls: { notifyUrl: null, redirectUrl: null }, request: redactPayerData({ merchant_subscribe_id: merchantSubscribeId }), requestedAt: at(0) }) },
      { stream, event: subscriptionCreated.make({ requestSeq: 1, recurringBillId, gatewayStatus: 'CREATED', linkUrl: null, createTime: at(1), traceId: null, resolvedBy: 'api_response', response: null, receivedAt: at(1) }) },
      { stream, event: subscriptionActivated.make({ recurringBillId, observationKey: `act-${String(i)}`, notificationType: 'Created', activatedAt: at(2) }) },
    ]
    const dates = ['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30']
    dates.slice(0, 1 + (i % 4)).forEach((date, k) => {
      const observationKey = `charge-${String(i)}-${date}`
      events.push(
        (i + k) % 5 === 4
          ? { stream, event: subscriptionChargeFailed.make({ recurringBillId, observationKey, notificationType: 'Deducted', billingDate: date, observedAt: at(60 * 24 * k + 3) }) }
          : { stream, event: subscriptionCharged.make({ recurringBillId, observationKey, notificationType: 'Deducted', billingDate: date, amount: plan.billingAmount, currency: 'THB', amountReported: true, observedAt: at(60 * 24 * k + 3) }) },
      )
    })
    out.push(events)
  }
  return out
}
