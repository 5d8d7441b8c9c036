import { describe, expect, it } from 'vitest'
import { encodeDomainEvent } from '../../../src/domain/events/index.ts'
import { DEFAULT_PAYMENT_STATUS_TABLE } from '../../../src/domain/gateway/statuses.ts'
import type { OrderEvent } from '../../../src/domain/order/index.ts'
import type { RefundEvent } from '../../../src/domain/refund/index.ts'
import type { SubscriptionEvent } from '../../../src/domain/subscription/index.ts'
import * as order from '../order/builders.ts'
import * as refund from '../refund/builders.ts'
import * as sub from '../subscription/builders.ts'
import { at, leakedSecrets, MERCHANT_ID, PAYER } from '../support/values.ts'
import { allEvents } from './catalogue.ts'

/*
 * PDPA: every command path that puts a raw payload into an event goes through redaction. Each case
 * feeds payer data (names, phone, email, id number, address, mobile number, buyer code, IP address)
 * and checks that none of it is in the events decided, nor in what would be stored.
 */

type AnyEvent = OrderEvent | RefundEvent | SubscriptionEvent

const extraPayer = { customer: { ...PAYER }, mobile_number: '0898765432' }
const payerIp = { remote_ip: '203.0.113.7' }

const paths: ReadonlyArray<readonly [string, () => ReadonlyArray<AnyEvent>]> = [
  ['RequestPayment (checkout)', () => order.given(order.anOrderCreated()).when({ type: 'RequestPayment', request: { operation: 'checkout', body: order.aCheckoutBody() }, requestedAt: at(1) }).events()],
  [
    'RequestPayment (direct, mobile banking)',
    () =>
      order
        .given(order.anOrderCreated({ operation: 'direct', service: 'svc.mobile.banking.pay' }))
        .when({ type: 'RequestPayment', request: { operation: 'direct', body: order.aDirectBody() }, requestedAt: at(1) })
        .events(),
  ],
  [
    'RequestPayment (direct, buyer code and payer IP)',
    () =>
      order
        .given(order.anOrderCreated({ operation: 'direct', service: 'svc.wallet_a.offline.pay' }))
        .when({
          type: 'RequestPayment',
          request: {
            operation: 'direct',
            body: order.aDirectBody({ service: 'svc.wallet_a.offline.pay', payment_method: 'MERCHANT_SCAN', buyer_identity_code: '286512345678901234', client: { remote_ip: '203.0.113.7' } }),
          },
          requestedAt: at(1),
        })
        .events(),
  ],
  [
    'RecordPaymentAccepted',
    () =>
      order
        .given(order.anOrderCreated(), order.aPaymentRequested())
        .when({ type: 'RecordPaymentAccepted', response: { ...order.aCheckoutAnswer(), ...extraPayer }, traceId: 't', receivedAt: at(1), statusTable: DEFAULT_PAYMENT_STATUS_TABLE })
        .events(),
  ],
  ['ReceivePaymentNotification', () => order.given(...order.anAcceptedCheckout()).when(order.notified({ ...order.aPaymentNotification(), ...extraPayer })).events()],
  ['ReceivePaymentNotification, disagreeing', () => order.given(...order.anAcceptedCheckout()).when(order.notified({ ...order.aPaymentNotification({ order_amount: '1.00' }), ...extraPayer })).events()],
  ['ReceivePaymentNotification, bad signature', () => order.given(...order.anAcceptedCheckout()).when(order.notified({ ...order.aPaymentNotification(), ...extraPayer }, { verified: false })).events()],
  ['ObservePaymentByQuery', () => order.given(...order.anAcceptedCheckout()).when(order.queried({ ...order.aQueryAnswer(), ...extraPayer })).events()],
  ['ReceiveCheckoutRedirect', () => order.given(...order.anAcceptedCheckout()).when(order.redirected({ ...order.aRedirectForm(), ...extraPayer })).events()],
  ['ReceiveCheckoutRedirect, bad signature', () => order.given(...order.anAcceptedCheckout()).when(order.redirected({ ...order.aRedirectForm(), ...extraPayer }, { verified: false })).events()],
  [
    'ReceivePaymentNotification, bad signature, payer IP',
    () => order.given(...order.anAcceptedCheckout()).when(order.notified({ ...order.aPaymentNotification(), ...extraPayer, ...payerIp }, { verified: false })).events(),
  ],
  ['ReceiveRefundNotification', () => refund.given(refund.aRefundTracked()).when(refund.refundNotified({ ...refund.aRefundNotification(), ...extraPayer })).events()],
  ['ReceiveRefundNotification, bad signature', () => refund.given(refund.aRefundTracked()).when(refund.refundNotified({ ...refund.aRefundNotification(), ...extraPayer }, { verified: false })).events()],
  ['ObserveRefundByQuery', () => refund.given().when(refund.refundQueried({ ...refund.aRefundRecord(), ...extraPayer })).events()],
  ['RequestSubscription', () => sub.given().when({ type: 'RequestSubscription', request: sub.aCreateRequest(), merchantUrls: sub.MERCHANT_URLS, requestedAt: at(0) }).events()],
  [
    'RequestSubscriptionUpdate',
    () => sub.given(...sub.anActiveSubscription()).when({ type: 'RequestSubscriptionUpdate', request: { ...sub.anUpdateRequest(), ...extraPayer }, requestedAt: at(100) }).events(),
  ],
  [
    'RequestSubscriptionCancel',
    () =>
      sub
        .given(...sub.anActiveSubscription())
        .when({ type: 'RequestSubscriptionCancel', request: { version: 'v1', service: 'svc.recurring.cancel', merchant_id: MERCHANT_ID, merchant_subscribe_id: sub.SUBSCRIBE_ID, ...extraPayer }, requestedAt: at(200) })
        .events(),
  ],
  [
    'RecordSubscriptionCreated',
    () => sub.given(sub.aSubscriptionRequested()).when({ type: 'RecordSubscriptionCreated', response: { ...sub.aCreateAnswer(), ...extraPayer }, traceId: 't', receivedAt: at(0) }).events(),
  ],
  [
    'RecordSubscriptionUpdated',
    () => {
      const requested = sub.given(...sub.anActiveSubscription()).when({ type: 'RequestSubscriptionUpdate', request: sub.anUpdateRequest(), requestedAt: at(100) }).events()
      const response = { merchant_id: MERCHANT_ID, merchant_subscribe_id: sub.SUBSCRIBE_ID, recurring_bill_id: sub.BILL_ID, recurring_bill_status: 'ACTIVE', link_url: 'https://g/s', ...extraPayer } as const
      return sub.given(...sub.anActiveSubscription(), ...requested).when({ type: 'RecordSubscriptionUpdated', response, traceId: 't', receivedAt: at(101) }).events()
    },
  ],
  ['ReceiveSubscriptionNotification', () => sub.given(...sub.anActiveSubscription()).when(sub.subscriptionNotified({ ...sub.aSubscriptionNotification({ billing_date: '2026-01-15' }), ...extraPayer })).events()],
  ['ReceiveSubscriptionNotification, bad signature', () => sub.given(...sub.anActiveSubscription()).when(sub.subscriptionNotified({ ...sub.aSubscriptionNotification(), ...extraPayer }, { verified: false })).events()],
  ['ReceiveSubscriptionRedirect', () => sub.given(...sub.anActiveSubscription()).when(sub.subscriptionRedirected({ ...sub.aSubscriptionRedirect(), ...extraPayer })).events()],
]

describe('PDPA: no payer data enters the log in clear', () => {
  it('(the check finds payer data when it is there)', () => {
    expect(leakedSecrets({ ...extraPayer, client: { remote_ip: '203.0.113.7' }, buyer_identity_code: '286512345678901234' })).toHaveLength(10)
  })
  it.each(paths)('%s', (_, decide) => {
    const events = decide()
    expect(events.length).toBeGreaterThan(0)
    expect(leakedSecrets(events)).toEqual([])
    expect(leakedSecrets(events.map(encodeDomainEvent))).toEqual([])
  })
  it('the raw payloads keep what reconciliation and audit need: ids, amounts, statuses, the merchant’s payer id', () => {
    const [requested] = order.given(order.anOrderCreated()).when({ type: 'RequestPayment', request: { operation: 'checkout', body: order.aCheckoutBody() }, requestedAt: at(1) }).events()
    expect(requested?.type === 'PaymentRequested' ? requested.data.request : null).toMatchObject({
      merchant_id: MERCHANT_ID,
      merchant_order_id: order.ORDER_ID,
      order_amount: '100.00',
      customer: { merchant_user_id: 'u-1', full_name: { redacted: true } },
    })
  })
  it('nothing in the whole catalogue of events leaks', () => {
    expect(leakedSecrets(allEvents().map(encodeDomainEvent))).toEqual([])
  })
})
