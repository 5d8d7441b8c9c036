
import type { OrderEvent } from '../../../src/domain/order/index.ts'
import type { RefundEvent } from '../../../src/domain/refund/index.ts'
import type { SubscriptionEvent } from '../../../src/domain/subscription/index.ts'
import * as order from '../order/builders.ts'
import * as refund from '../refund/builders.ts'
import * as sub from '../subscription/builders.ts'
import { at, MERCHANT_ID } from '../support/values.ts'

/** Events of every type, decided by the aggregates from realistic commands (payer data included). */
export const orderEvents = (): ReadonlyArray<OrderEvent> => {
  const accepted = order.anAcceptedCheckout()
  const unknown = order.given(order.anOrderCreated(), order.aPaymentRequested()).when({ type: 'RecordPaymentOutcomeUnknown', reason: 'timeout', httpStatus: 504, traceId: 't', since: at(1) }).events()
  const failed = order.given(order.anOrderCreated(), order.aPaymentRequested()).when({ type: 'RecordPaymentRequestFailed', failure: { reason: 'validation', violations: [{ path: 'customer', rule: 'is required' }] }, failedAt: at(1) }).events()
  return [
    ...accepted,
    ...unknown,
    ...failed,
    ...order.given(...accepted).when(order.redirected(order.aRedirectForm({ order_amount: '1.00' }))).events(),
    ...order.given(...accepted).when(order.notified(order.aPaymentNotification())).events(),
    ...order.given(...accepted).when(order.notified(order.aPaymentNotification(), { verified: false })).events(),
    ...order.given(...accepted).when(order.queried(order.aQueryAnswer({ order_status: 'ZZ' }))).events(),
  ]
}

export const refundEvents = (): ReadonlyArray<RefundEvent> => [
  refund.aRefundTracked(),
  ...refund.given(refund.aRefundTracked()).when(refund.refundNotified(refund.aRefundNotification())).events(),
  ...refund.given(refund.aRefundTracked()).when(refund.refundQueried(refund.aRefundRecord({ refund_amount: '999.00' }))).events(),
]

export const subscriptionEvents = (): ReadonlyArray<SubscriptionEvent> => {
  const active = sub.anActiveSubscription()
  const failed = (date: string) => sub.subscriptionNotified(sub.aSubscriptionNotification({ status: 'FAIL', billing_date: date }))
  const suspended = sub.run(active, failed('2026-01-15'), failed('2026-01-16'), failed('2026-01-17'))
  const updating = sub.given(...active).when({ type: 'RequestSubscriptionUpdate', request: sub.anUpdateRequest(), requestedAt: at(100) }).events()
  const updated = sub
    .given(...active, ...updating)
    .when({
      type: 'RecordSubscriptionUpdated',
      response: { merchant_id: MERCHANT_ID, merchant_subscribe_id: sub.SUBSCRIBE_ID, recurring_bill_id: sub.BILL_ID, recurring_bill_status: 'ACTIVE', link_url: 'https://g.example/s' },
      traceId: 't-u',
      receivedAt: at(101),
    })
    .events()
  const cancelling = sub.given(...active).when({ type: 'RequestSubscriptionCancel', request: { version: 'v1', service: 'svc.recurring.cancel', merchant_id: MERCHANT_ID, merchant_subscribe_id: sub.SUBSCRIBE_ID }, requestedAt: at(200) }).events()
  const cancelled = sub.given(...active, ...cancelling).when({ type: 'RecordSubscriptionCancelled', traceId: null, receivedAt: at(201) }).events()
  const unknown = sub.given(...active, ...cancelling).when({ type: 'RecordSubscriptionOutcomeUnknown', reason: 'http_5xx', httpStatus: 502, traceId: null, since: at(201) }).events()
  const failedRequest = sub.given(...active, ...cancelling).when({ type: 'RecordSubscriptionRequestFailed', failure: { reason: 'not_sent', detail: 'ECONNREFUSED' }, failedAt: at(201) }).events()
  return [
    ...suspended,
    ...sub.given(...active).when(sub.subscriptionNotified(sub.aSubscriptionNotification({ billing_date: '2026-01-15' }))).events(),
    ...sub.given(...active).when(sub.subscriptionRedirected(sub.aSubscriptionRedirect())).events(),
    ...updating,
    ...updated,
    ...cancelling,
    ...cancelled,
    ...unknown,
    ...failedRequest,
  ]
}

export const allEvents = (): ReadonlyArray<OrderEvent | RefundEvent | SubscriptionEvent> => [...orderEvents(), ...refundEvents(), ...subscriptionEvents()]

