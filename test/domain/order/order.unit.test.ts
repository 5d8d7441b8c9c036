import { describe, expect, it } from 'vitest'
import { callbackRejected, rejectCallback } from '../../../src/domain/events/common/callback-rejected.ts'
import { discrepancyObserved } from '../../../src/domain/events/common/discrepancy-observed.ts'
import { notificationReceived } from '../../../src/domain/events/common/notification-received.ts'
import { redirectReceived } from '../../../src/domain/events/common/redirect-received.ts'
import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import { classifyPaymentStatus, DEFAULT_PAYMENT_STATUS_TABLE, extendStatusTable } from '../../../src/domain/gateway/statuses.ts'
import {
  awaitsOutcome,
  fold,
  isPaid,
  needsReview,
  orderCreated,
  orderEventNaturalKey,
  orderStreamName,
  parseOrderStreamName,
  paymentObservationKey,
  paymentOutcomeUnknown,
  paymentRequestFailed,
  paymentRequested,
  statusObserved,
  type Order,
  type OrderState,
} from '../../../src/domain/order/index.ts'
import { at, GATEWAY_ORDER_ID, MERCHANT_ID, sat, T0 } from '../support/values.ts'
import {
  aCheckoutAnswer,
  aCheckoutBody,
  aCreateOrder,
  aDirectBody,
  anAcceptedCheckout,
  anOrderCreated,
  aPaymentNotification,
  aPaymentRequested,
  aQueryAnswer,
  aRedirectForm,
  aStatusObserved,
  given,
  notified,
  ORDER_ID,
  queried,
  redirected,
} from './builders.ts'

const order = (s: OrderState): Order => {
  if (s._tag !== 'Order') throw new Error('expected an order')
  return s
}

const PF_IS_FAILED = extendStatusTable(DEFAULT_PAYMENT_STATUS_TABLE, { PF: { meaning: 'payment failed', outcome: 'failed' } })
const withPF = PF_IS_FAILED._tag === 'Right' ? PF_IS_FAILED.right : DEFAULT_PAYMENT_STATUS_TABLE

describe('stream names', () => {
  it('order-<merchant_id>-<merchant_order_id>, and back even when the order id has dashes', () => {
    expect(orderStreamName(MERCHANT_ID, 'A-B-1')).toBe('order-140000000000000001-A-B-1')
    expect(parseOrderStreamName('order-140000000000000001-A-B-1')).toEqual({ merchantId: MERCHANT_ID, merchantOrderId: 'A-B-1' })
    expect(parseOrderStreamName('refund-140000000000000001-A')).toBeNull()
  })
})

describe('CreateOrder', () => {
  it('records OrderCreated with the merchant’s own URLs and no payer data', () => {
    given()
      .when(aCreateOrder())
      .then([
        orderCreated.make({
          merchantId: MERCHANT_ID,
          storeId: null,
          merchantOrderId: ORDER_ID,
          operation: 'checkout',
          service: 'svc.checkout.apply',
          paymentMethod: null,
          productCode: null,
          amount: sat(10000n),
          currency: 'THB',
          orderDesc: 'Iced coffee',
          merchantUrls: { notifyUrl: 'https://merchant.example/notify', redirectUrl: 'https://merchant.example/done', cancelUrl: null },
          createdAt: T0,
        }),
      ])
  })
  it('creating an order twice is rejected', () => {
    given(anOrderCreated()).when(aCreateOrder()).thenRejects('OrderAlreadyExists')
  })
  it('a checkout must use svc.checkout.apply and a direct payment a direct service', () => {
    given().when(aCreateOrder({ operation: 'checkout', service: 'svc.thaiqr.pay' })).thenRejects('InvalidOrder')
    given().when(aCreateOrder({ operation: 'direct', service: 'svc.checkout.apply' })).thenRejects('InvalidOrder')
  })
})

describe('RequestPayment: recorded before sending', () => {
  it('records the wire fields, payer data redacted', () => {
    given(anOrderCreated())
      .when({ type: 'RequestPayment', request: { operation: 'checkout', body: aCheckoutBody() }, requestedAt: at(1) })
      .then([paymentRequested.make({ operation: 'checkout', service: 'svc.checkout.apply', request: redactPayerData(aCheckoutBody()), requestedAt: at(1) })])
  })
  it('a direct payment names its own service', () => {
    const direct = anOrderCreated({ operation: 'direct', service: 'svc.mobile.banking.pay', paymentMethod: 'BANKAPP_A_NOTIFICATION' })
    given(direct).when({ type: 'RequestPayment', request: { operation: 'direct', body: aDirectBody() }, requestedAt: at(1) }).thenTypes('PaymentRequested')
    given(direct)
      .when({ type: 'RequestPayment', request: { operation: 'direct', body: aDirectBody({ service: 'svc.thaiqr.pay' }) }, requestedAt: at(1) })
      .thenRejects('RequestDoesNotMatchOrder')
  })
  it('is refused when the request does not carry the order’s amount, currency or ids', () => {
    const when = given(anOrderCreated()).when({ type: 'RequestPayment', request: { operation: 'checkout', body: aCheckoutBody({ order_amount: '99.99', order_currency: 'USD' }) }, requestedAt: at(1) })
    expect(when.result).toEqual({
      _tag: 'Left',
      left: {
        _tag: 'RequestDoesNotMatchOrder',
        mismatches: [
          { field: 'amount', expected: '10000', observed: '9999' },
          { field: 'currency', expected: 'THB', observed: 'USD' },
        ],
      },
    })
  })
  it('is requested once: the create is never sent twice', () => {
    given(anOrderCreated(), aPaymentRequested())
      .when({ type: 'RequestPayment', request: { operation: 'checkout', body: aCheckoutBody() }, requestedAt: at(2) })
      .thenRejects('PaymentAlreadyRequested')
  })
  it('needs the order', () => {
    given().when({ type: 'RequestPayment', request: { operation: 'checkout', body: aCheckoutBody() }, requestedAt: at(1) }).thenRejects('OrderNotFound')
  })
})

describe('the outcome of the create: exactly one of accepted, failed, unknown', () => {
  const accepted = { type: 'RecordPaymentAccepted', response: aCheckoutAnswer(), traceId: 'trace-create', receivedAt: at(1), statusTable: DEFAULT_PAYMENT_STATUS_TABLE } as const
  const failed = { type: 'RecordPaymentRequestFailed', failure: { reason: 'gateway_rejected', code: 400001, message: 'invalid parameter', traceId: 't-1' }, failedAt: at(1) } as const
  const unknown = { type: 'RecordPaymentOutcomeUnknown', reason: 'timeout', httpStatus: null, traceId: null, since: at(1) } as const

  it('accepted: the gateway order id, the link and the answer’s status (PI)', () => {
    const then = given(anOrderCreated(), aPaymentRequested()).when(accepted)
    then.thenTypes('PaymentRequestAccepted')
    const s = order(then.state())
    expect(s.request).toEqual({ phase: 'accepted', acceptedAt: at(1), linkUrl: 'https://gateway.example/checkout/202601010000000001' })
    expect(s.gatewayOrderId).toBe(GATEWAY_ORDER_ID)
    expect(s.status?.code).toBe('PI')
    expect(isPaid(s)).toBe(false)
  })
  it('failed and unknown are recorded as they are', () => {
    given(anOrderCreated(), aPaymentRequested())
      .when(failed)
      .then([paymentRequestFailed.make({ reason: 'gateway_rejected', code: 400001, message: 'invalid parameter', traceId: 't-1', violations: [], failedAt: at(1) })])
    given(anOrderCreated(), aPaymentRequested()).when(unknown).then([paymentOutcomeUnknown.make({ reason: 'timeout', httpStatus: null, traceId: null, since: at(1) })])
  })
  it('a second outcome is refused', () => {
    for (const outcome of [accepted, failed, unknown]) {
      given(...anAcceptedCheckout()).when(outcome).thenRejects('NoPaymentRequestPending')
    }
    given(anOrderCreated(), aPaymentRequested(), paymentOutcomeUnknown.make({ reason: 'timeout', httpStatus: null, traceId: null, since: at(1) }))
      .when(accepted)
      .thenRejects('NoPaymentRequestPending')
  })
  it('no outcome before the request, except a validation failure (nothing was sent)', () => {
    given(anOrderCreated()).when(accepted).thenRejects('NoPaymentRequestPending')
    given(anOrderCreated())
      .when({ type: 'RecordPaymentRequestFailed', failure: { reason: 'validation', violations: [{ path: 'customer', rule: 'is required' }] }, failedAt: at(1) })
      .thenTypes('PaymentRequestFailed')
  })
  it('an answer that disagrees with the order is recorded with a discrepancy and its status is not used', () => {
    const then = given(anOrderCreated(), aPaymentRequested()).when({ ...accepted, response: aCheckoutAnswer({ order_amount: '1.00' }) })
    then.thenTypes('PaymentRequestAccepted', 'DiscrepancyObserved')
    expect(order(then.state()).status).toBeNull()
    expect(needsReview(then.state())).toBe(true)
  })
})

describe('an unknown outcome is resolved by a query', () => {
  const unknownOutcome = [anOrderCreated(), aPaymentRequested(), paymentOutcomeUnknown.make({ reason: 'http_5xx', httpStatus: 502, traceId: null, since: at(1) })]

  it('awaits resolution while requested or unknown', () => {
    expect(awaitsOutcome(fold([anOrderCreated(), aPaymentRequested()]))).toBe(true)
    expect(awaitsOutcome(fold(unknownOutcome))).toBe(true)
    expect(awaitsOutcome(fold(anAcceptedCheckout()))).toBe(false)
  })
  it('a query that finds the order records the observation, and the order is no longer unknown', () => {
    const then = given(...unknownOutcome).when(queried(aQueryAnswer({ order_status: 'PI', complete_time: null })))
    then.thenTypes('StatusObserved')
    const s = order(then.state())
    expect(s.request).toEqual({ phase: 'resolved_by_observation', resolvedAt: at(6) })
    expect(awaitsOutcome(s)).toBe(false)
    expect(s.status?.code).toBe('PI')
  })
  it('a query that does not find it: the create failed', () => {
    given(...unknownOutcome)
      .when({ type: 'RecordPaymentRequestFailed', failure: { reason: 'not_found_by_query', code: 404001, message: 'not found', traceId: 't-q' }, failedAt: at(9) })
      .thenTypes('PaymentRequestFailed')
  })
  it('an outcome recorded as unknown after a notification already reported the order is resolved at once', () => {
    const s = fold([anOrderCreated(), aPaymentRequested(), aStatusObserved({ statusCode: 'PS' }), paymentOutcomeUnknown.make({ reason: 'interrupted', httpStatus: null, traceId: null, since: at(6) })])
    expect(order(s).request.phase).toBe('resolved_by_observation')
  })
  it('a notification may arrive before the create answer: the answer does not overwrite it', () => {
    const s = fold([anOrderCreated(), aPaymentRequested(), aStatusObserved({ statusCode: 'PS' })])
    const then = given(anOrderCreated(), aPaymentRequested(), aStatusObserved({ statusCode: 'PS' })).when({
      type: 'RecordPaymentAccepted',
      response: aCheckoutAnswer(),
      traceId: 'trace-create',
      receivedAt: at(7),
      statusTable: DEFAULT_PAYMENT_STATUS_TABLE,
    })
    expect(isPaid(s)).toBe(true)
    expect(order(then.state()).status?.code).toBe('PS')
  })
})

describe('notifications and queries are authority', () => {
  it('a verified PS notification: NotificationReceived then StatusObserved; the order is paid', () => {
    const n = aPaymentNotification()
    const key = paymentObservationKey('notification', n)
    const then = given(...anAcceptedCheckout()).when(notified(n))
    then.then([
      notificationReceived.make({ kind: 'PAYMENT', observationKey: key, receivedAt: at(5), payload: redactPayerData(n) }),
      statusObserved.make({
        merchantId: MERCHANT_ID,
        merchantOrderId: ORDER_ID,
        gatewayOrderId: GATEWAY_ORDER_ID,
        statusCode: 'PS',
        classification: classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'PS'),
        amount: sat(10000n),
        currency: 'THB',
        observationKey: key,
        traceId: null,
        completeTime: new Date('2026-01-01T03:04:00.000Z'),
        source: 'notification',
        observedAt: at(5),
      }),
    ])
    expect(isPaid(then.state())).toBe(true)
  })
  it('the same notification twice is one event', () => {
    const first = given(...anAcceptedCheckout()).when(notified(aPaymentNotification())).events()
    given(...anAcceptedCheckout(), ...first).when(notified(aPaymentNotification(), { at: at(8) })).thenNothing()
  })
  it('the same status from another source is another observation (a query confirming the notification)', () => {
    given(...anAcceptedCheckout(), aStatusObserved({ source: 'notification', statusCode: 'PS' })).when(queried(aQueryAnswer())).thenTypes('StatusObserved')
    given(...anAcceptedCheckout(), aStatusObserved({ source: 'query', statusCode: 'PS' })).when(queried(aQueryAnswer())).thenNothing()
  })
})

describe('a final status never regresses', () => {
  const paid = [...anAcceptedCheckout(), aStatusObserved({ statusCode: 'PS' })]

  it('WP after PS: the notification is kept as evidence, no StatusObserved, the order stays paid; a stale query records nothing', () => {
    const late = aPaymentNotification({ order_status: 'WP', complete_time: null })
    const then = given(...paid).when(notified(late))
    then.thenTypes('NotificationReceived')
    expect(order(then.state()).status?.code).toBe('PS')
    given(...paid, ...then.events()).when(notified(late)).thenNothing()
    given(...paid).when(queried(aQueryAnswer({ order_status: 'PI' }))).thenNothing()
  })
  it('a different final status after PS is a discrepancy, not applied', () => {
    const then = given(...paid).when(queried(aQueryAnswer({ order_status: 'PF' }), { statusTable: withPF }))
    then.thenTypes('DiscrepancyObserved')
    expect(then.events()[0]).toMatchObject({ data: { mismatches: [{ field: 'final_status', expected: 'PS', observed: 'PF' }] } })
    expect(order(then.state()).status?.code).toBe('PS')
  })
  it('holds whatever the order of arrival (PS, WP, PI, PS in any order ends paid)', () => {
    const observations = [aQueryAnswer({ order_status: 'WP' }), aQueryAnswer({ order_status: 'PS' }), aQueryAnswer({ order_status: 'PI' })]
    for (const sequence of [[0, 1, 2], [1, 0, 2], [2, 1, 0], [1, 2, 0]]) {
      let state = fold(anAcceptedCheckout())
      const events = [...anAcceptedCheckout()]
      sequence.forEach((i, n) => {
        const answer = observations[i]
        if (answer === undefined) return
        const decided = given(...events).when(queried(answer, { at: at(10 + n) })).events()
        events.push(...decided)
        state = fold(events)
      })
      expect(isPaid(state)).toBe(true)
    }
  })
})

describe('a redirect is evidence, not authority', () => {
  it('a redirect saying PS records RedirectReceived and does not make the order paid', () => {
    const form = aRedirectForm()
    const then = given(...anAcceptedCheckout()).when(redirected(form))
    then.then([redirectReceived.make({ kind: 'CHECKOUT', observationKey: paymentObservationKey('redirect', form), status: 'PS', receivedAt: at(4), payload: redactPayerData(form) })])
    const s = order(then.state())
    expect(isPaid(s)).toBe(false)
    expect(s.status?.code).toBe('PI')
    expect(s.redirectStatus).toBe('PS')
  })
  it('the same redirect twice is one event; the notification that follows makes the order paid', () => {
    const redirect = given(...anAcceptedCheckout()).when(redirected(aRedirectForm())).events()
    given(...anAcceptedCheckout(), ...redirect).when(redirected(aRedirectForm())).thenNothing()
    const then = given(...anAcceptedCheckout(), ...redirect).when(notified(aPaymentNotification()))
    then.thenTypes('NotificationReceived', 'StatusObserved')
    expect(isPaid(then.state())).toBe(true)
  })
  it('a redirect whose amount disagrees is kept with a discrepancy', () => {
    given(...anAcceptedCheckout()).when(redirected(aRedirectForm({ order_amount: '1.00' }))).thenTypes('RedirectReceived', 'DiscrepancyObserved')
  })
})

describe('an observation that disagrees with the order is a discrepancy, never applied silently', () => {
  it('another amount: recorded as DiscrepancyObserved; the status is not applied; the order needs review', () => {
    const n = aPaymentNotification({ order_amount: '90.00' })
    const then = given(...anAcceptedCheckout()).when(notified(n))
    then.then([
      notificationReceived.make({ kind: 'PAYMENT', observationKey: paymentObservationKey('notification', n), receivedAt: at(5), payload: redactPayerData(n) }),
      discrepancyObserved.make({
        source: 'notification',
        observationKey: paymentObservationKey('notification', n),
        observedAt: at(5),
        statusCode: 'PS',
        mismatches: [{ field: 'amount', expected: '10000', observed: '9000' }],
      }),
    ])
    const s = order(then.state())
    expect(isPaid(s)).toBe(false)
    expect(s.status?.code).toBe('PI')
    expect(needsReview(s)).toBe(true)
    expect(s.discrepancies).toHaveLength(1)
  })
  it('another currency or gateway order id: likewise; the same disagreement twice is one event', () => {
    const then = given(...anAcceptedCheckout()).when(queried(aQueryAnswer({ order_currency: 'USD', order_id: '202601010000000999' })))
    expect(then.events()[0]).toMatchObject({
      type: 'DiscrepancyObserved',
      data: {
        source: 'query',
        mismatches: [
          { field: 'gateway_order_id', expected: GATEWAY_ORDER_ID, observed: '202601010000000999' },
          { field: 'currency', expected: 'THB', observed: 'USD' },
        ],
      },
    })
    given(...anAcceptedCheckout(), ...then.events()).when(queried(aQueryAnswer({ order_currency: 'USD', order_id: '202601010000000999' }))).thenNothing()
  })
})

describe('unknown status codes', () => {
  it('are stored as observed, non-final, and flagged for review', () => {
    const then = given(...anAcceptedCheckout()).when(notified(aPaymentNotification({ order_status: 'ZZ' })))
    then.thenTypes('NotificationReceived', 'StatusObserved')
    expect(then.events()[1]).toMatchObject({ data: { statusCode: 'ZZ', classification: { final: false, needsReview: true, outcome: 'pending' } } })
    const s = order(then.state())
    expect(s.status?.code).toBe('ZZ')
    expect(s.unclassifiedStatuses).toEqual(['ZZ'])
    expect(needsReview(s)).toBe(true)
  })
  it('after a final status they are still kept (never dropped) but change nothing', () => {
    const then = given(...anAcceptedCheckout(), aStatusObserved({ statusCode: 'PS' })).when(queried(aQueryAnswer({ order_status: 'ZZ' })))
    then.thenTypes('StatusObserved')
    expect(order(then.state()).status?.code).toBe('PS')
    expect(needsReview(then.state())).toBe(true)
  })
})

describe('callbacks whose signature does not verify', () => {
  it('a forged notification: only CallbackRejected, and no state change', () => {
    const n = aPaymentNotification({ order_amount: '1.00' })
    const then = given(...anAcceptedCheckout()).when(notified(n, { verified: false }))
    then.then([
      callbackRejected.make({
        callback: 'payment_notification',
        reason: 'bad_signature',
        detail: 'signature does not match the gateway key',
        violations: [],
        callbackId: 'req-1',
        receivedAt: at(5),
        payload: redactPayerData(n),
      }),
    ])
    expect(then.state()).toEqual(fold(anAcceptedCheckout()))
  })
  it('a forged redirect likewise, and a forged callback about an unknown order is still kept', () => {
    given(...anAcceptedCheckout()).when(redirected(aRedirectForm(), { verified: false })).thenTypes('CallbackRejected')
    given().when(notified(aPaymentNotification(), { verified: false })).thenTypes('CallbackRejected')
  })
  it('a verified callback about an order satang does not know is refused', () => {
    given().when(notified(aPaymentNotification())).thenRejects('OrderNotFound')
    given().when(redirected(aRedirectForm())).thenRejects('OrderNotFound')
  })
  // An undecodable callback is quarantined (application/callbacks.ts); the event of a refused one (a forged callback above) keeps what could be read of it.
  it('a refused callback is kept as CallbackRejected with what could be read of it, payer data redacted', () => {
    expect(
      rejectCallback({
        callback: 'payment_notification',
        reason: 'undecodable',
        detail: 'invalid notification',
        violations: [{ path: 'order_amount', rule: 'must not be negative' }],
        callbackId: 'req-9',
        receivedAt: at(5),
        payload: { merchant_order_id: ORDER_ID, order_amount: '-1', customer: { full_name: 'Somchai Jaidee' } },
      }),
    ).toEqual(
      callbackRejected.make({
        callback: 'payment_notification',
        reason: 'undecodable',
        detail: 'invalid notification',
        violations: [{ path: 'order_amount', rule: 'must not be negative' }],
        callbackId: 'req-9',
        receivedAt: at(5),
        payload: redactPayerData({ merchant_order_id: ORDER_ID, order_amount: '-1', customer: { full_name: 'x' } }),
      }),
    )
  })
})

describe('natural keys', () => {
  it('are distinct for the events of one stream and stable for the same fact', () => {
    const stream = orderStreamName(MERCHANT_ID, ORDER_ID)
    const events = [...anAcceptedCheckout(), aStatusObserved({ source: 'notification' }), aStatusObserved({ source: 'query' })]
    const keys = events.map((e) => orderEventNaturalKey(stream, e))
    expect(new Set(keys).size).toBe(keys.length)
    expect(orderEventNaturalKey(stream, aStatusObserved())).toBe(orderEventNaturalKey(stream, aStatusObserved({ observedAt: at(99) })))
  })
})
