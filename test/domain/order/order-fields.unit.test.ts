import { describe, expect, it } from 'vitest'
import { rejectCallback } from '../../../src/domain/events/common/callback-rejected.ts'
import { discrepancyObserved, type Mismatch } from '../../../src/domain/events/common/discrepancy-observed.ts'
import { notificationReceived } from '../../../src/domain/events/common/notification-received.ts'
import { notFoundObservationKey, queryNotFound } from '../../../src/domain/events/common/query-not-found.ts'
import { redirectReceived } from '../../../src/domain/events/common/redirect-received.ts'
import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import type { RequestFailure } from '../../../src/domain/events/request-outcome.ts'
import { classifyPaymentStatus, DEFAULT_PAYMENT_STATUS_TABLE } from '../../../src/domain/gateway/statuses.ts'
import {
  orderCreated,
  paymentObservationKey,
  paymentOutcomeUnknown,
  paymentRequestAccepted,
  paymentRequestFailed,
  paymentRequested,
  statusObserved,
  type OrderCommand,
  type OrderEvent,
  type PaymentRequestPhase,
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
  given,
  notified,
  ORDER_ID,
  queried,
  redirected,
} from './builders.ts'

/*
 * Every identifier, amount and currency check of the order decider, each shown by a message that
 * differs from the order in that one field only; rejections and events compared whole.
 */

const OTHER_MERCHANT = '140000000000000099'
const OTHER_GATEWAY_ORDER = '202601010000000099'

describe('CreateOrder', () => {
  it('records every field of the command', () => {
    const command = aCreateOrder({ storeId: 'S-1', paymentMethod: 'PM', productCode: 'PC' })
    const { type: _, ...data } = command
    given().when(command).then([orderCreated.make(data)])
  })
  it('an order that exists already: the rejection names the existing order', () => {
    given(anOrderCreated()).when(aCreateOrder({ merchantOrderId: 'OTHER' })).thenRejectsWith({ _tag: 'OrderAlreadyExists', merchantId: MERCHANT_ID, merchantOrderId: ORDER_ID })
  })
  it('the service must fit the operation: each rule says which', () => {
    given().when(aCreateOrder({ operation: 'checkout', service: 'svc.thaiqr.pay' })).thenRejectsWith({ _tag: 'InvalidOrder', violations: [{ path: 'service', rule: 'must be svc.checkout.apply for a checkout' }] })
    given().when(aCreateOrder({ operation: 'direct', service: 'svc.checkout.apply' })).thenRejectsWith({ _tag: 'InvalidOrder', violations: [{ path: 'service', rule: 'must be a direct payment service such as svc.thaiqr.pay' }] })
    given().when(aCreateOrder({ operation: 'direct', service: 'svc.thaiqr.pay' })).thenTypes('OrderCreated')
    given().when(aCreateOrder({ operation: 'checkout', service: 'svc.checkout.apply' })).thenTypes('OrderCreated')
  })
})

describe('RequestPayment: the request must be the order, field by field', () => {
  const checkout = (body: Partial<ReturnType<typeof aCheckoutBody>>): OrderCommand => ({ type: 'RequestPayment', request: { operation: 'checkout', body: aCheckoutBody(body) }, requestedAt: at(1) })
  const direct = (body: Partial<ReturnType<typeof aDirectBody>>): OrderCommand => ({ type: 'RequestPayment', request: { operation: 'direct', body: aDirectBody(body) }, requestedAt: at(1) })
  const mismatch = (field: Mismatch['field'], expected: string, observed: string) => ({ _tag: 'RequestDoesNotMatchOrder' as const, mismatches: [{ field, expected, observed }] })

  it.each([
    ['merchant_id', checkout({ merchant_id: OTHER_MERCHANT }), mismatch('merchant_id', MERCHANT_ID, OTHER_MERCHANT)],
    ['merchant_order_id', checkout({ merchant_order_id: 'ORDER-OTHER' }), mismatch('merchant_order_id', ORDER_ID, 'ORDER-OTHER')],
    ['amount', checkout({ order_amount: '100.01' }), mismatch('amount', '10000', '10001')],
    ['currency', checkout({ order_currency: 'USD' }), mismatch('currency', 'THB', 'USD')],
  ])('a checkout order refuses a request with another %s', (_, command, rejection) => {
    given(anOrderCreated()).when(command).thenRejectsWith(rejection)
  })

  it('a request of another operation is refused even for the same service', () => {
    // An order recorded as direct on the checkout service (no rule of today creates one): only the operation differs.
    given(anOrderCreated({ operation: 'direct', service: 'svc.checkout.apply' })).when(checkout({})).thenRejectsWith(mismatch('operation', 'direct', 'checkout'))
  })

  it('an amount that is not one is named as unreadable', () => {
    given(anOrderCreated()).when(checkout({ order_amount: 'abc' })).thenRejectsWith(mismatch('amount', '10000', '(absent or unreadable)'))
  })

  it('a direct order refuses another service, and a checkout request for it (operation and service)', () => {
    const created = anOrderCreated({ operation: 'direct', service: 'svc.mobile.banking.pay' })
    given(created).when(direct({ service: 'svc.thaiqr.pay' })).thenRejectsWith(mismatch('service', 'svc.mobile.banking.pay', 'svc.thaiqr.pay'))
    given(created).when(checkout({})).thenRejectsWith({
      _tag: 'RequestDoesNotMatchOrder',
      mismatches: [
        { field: 'operation', expected: 'direct', observed: 'checkout' },
        { field: 'service', expected: 'svc.mobile.banking.pay', observed: 'svc.checkout.apply' },
      ],
    })
    given(created)
      .when(direct({}))
      .then([paymentRequested.make({ operation: 'direct', service: 'svc.mobile.banking.pay', request: redactPayerData(aDirectBody()), requestedAt: at(1) })])
  })

  it.each<PaymentRequestPhase['phase']>(['requested', 'accepted'])('a payment already %s is not requested again; the rejection names the phase', (phase) => {
    const history: OrderEvent[] = phase === 'requested' ? [anOrderCreated(), aPaymentRequested()] : [...anAcceptedCheckout()]
    given(...history).when(checkout({})).thenRejectsWith({ _tag: 'PaymentAlreadyRequested', phase })
  })
})

describe('RecordPaymentAccepted: an answer that differs from the order in one field', () => {
  const answered = (o: Partial<ReturnType<typeof aCheckoutAnswer>>): OrderCommand => ({
    type: 'RecordPaymentAccepted',
    response: aCheckoutAnswer(o),
    traceId: 'trace-create',
    receivedAt: at(1),
    statusTable: DEFAULT_PAYMENT_STATUS_TABLE,
  })
  const acceptedOf = (o: Partial<ReturnType<typeof aCheckoutAnswer>>, amount = sat(10000n)): OrderEvent => {
    const r = aCheckoutAnswer(o)
    return paymentRequestAccepted.make({
      gatewayOrderId: r.order_id,
      statusCode: r.order_status,
      classification: classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, r.order_status),
      amount,
      currency: r.order_currency,
      createTime: new Date('2026-01-01T03:01:00.000Z'),
      linkUrl: r.link_url ?? null,
      traceId: 'trace-create',
      response: redactPayerData(r),
      receivedAt: at(1),
    })
  }
  const discrepancy = (mismatches: ReadonlyArray<Mismatch>, status = 'PI'): OrderEvent =>
    discrepancyObserved.make({
      source: 'api_response',
      observationKey: paymentObservationKey('api_response', { merchant_id: MERCHANT_ID, merchant_order_id: ORDER_ID, order_id: GATEWAY_ORDER_ID, order_status: status }),
      observedAt: at(1),
      statusCode: status,
      mismatches: [...mismatches],
    })

  it('the same order: only PaymentRequestAccepted, every field of the answer', () => {
    given(anOrderCreated(), aPaymentRequested()).when(answered({})).then([acceptedOf({})])
  })
  it('another merchant_order_id: a discrepancy naming it', () => {
    given(anOrderCreated(), aPaymentRequested())
      .when(answered({ merchant_order_id: 'ORDER-OTHER' }))
      .then([acceptedOf({ merchant_order_id: 'ORDER-OTHER' }), discrepancy([{ field: 'merchant_order_id', expected: ORDER_ID, observed: 'ORDER-OTHER' }])])
  })
  it('no merchant_order_id in the answer is not a disagreement', () => {
    given(anOrderCreated(), aPaymentRequested()).when(answered({ merchant_order_id: '' })).then([acceptedOf({ merchant_order_id: '' })])
  })
  it('another currency: a discrepancy naming it', () => {
    given(anOrderCreated(), aPaymentRequested())
      .when(answered({ order_currency: 'USD' }))
      .then([acceptedOf({ order_currency: 'USD' }), discrepancy([{ field: 'currency', expected: 'THB', observed: 'USD' }])])
  })
  it('another amount: a discrepancy naming it', () => {
    given(anOrderCreated(), aPaymentRequested())
      .when(answered({ order_amount: '100.01' }))
      .then([acceptedOf({ order_amount: '100.01' }, sat(10001n)), discrepancy([{ field: 'amount', expected: '10000', observed: '10001' }])])
  })
  it('an amount that is not one: MalformedGatewayMessage naming order_amount', () => {
    given(anOrderCreated(), aPaymentRequested()).when(answered({ order_amount: '1e2' })).thenRejectsWith({ _tag: 'MalformedGatewayMessage', violations: [{ path: 'order_amount', rule: 'must be an amount' }] })
  })
  it.each<readonly [PaymentRequestPhase['phase'], ReadonlyArray<OrderEvent>]>([
    ['not_requested', [anOrderCreated()]],
    ['accepted', anAcceptedCheckout()],
  ])('no request pending (%s): the rejection names the phase', (phase, history) => {
    given(...history).when(answered({})).thenRejectsWith({ _tag: 'NoPaymentRequestPending', phase })
  })
  it('needs the order', () => {
    given().when(answered({})).thenRejectsWith({ _tag: 'OrderNotFound' })
  })
})

describe('RecordPaymentRequestFailed and RecordPaymentOutcomeUnknown: in which phase each is allowed', () => {
  const failures: Record<RequestFailure['reason'], RequestFailure> = {
    validation: { reason: 'validation', violations: [{ path: 'customer', rule: 'is required' }] },
    gateway_rejected: { reason: 'gateway_rejected', code: 400001, message: 'invalid parameter', traceId: 't-1' },
    not_sent: { reason: 'not_sent', detail: 'connection refused' },
    not_found_by_query: { reason: 'not_found_by_query', code: 404001, message: 'not found', traceId: 't-q' },
  }
  const unknown = paymentOutcomeUnknown.make({ reason: 'timeout', httpStatus: 504, traceId: 't-u', since: at(2) })
  const phases = ['not_requested', 'requested', 'outcome_unknown', 'accepted', 'failed'] as const
  const histories: Record<(typeof phases)[number], ReadonlyArray<OrderEvent>> = {
    not_requested: [anOrderCreated()],
    requested: [anOrderCreated(), aPaymentRequested()],
    outcome_unknown: [anOrderCreated(), aPaymentRequested(), unknown],
    accepted: anAcceptedCheckout(),
    failed: [anOrderCreated(), aPaymentRequested(), paymentRequestFailed.make({ reason: 'not_sent', code: null, message: 'x', traceId: null, violations: [], failedAt: at(2) })],
  }
  const allowed: Record<RequestFailure['reason'], ReadonlyArray<PaymentRequestPhase['phase']>> = {
    validation: ['not_requested', 'requested'],
    gateway_rejected: ['requested'],
    not_sent: ['requested'],
    not_found_by_query: ['requested', 'outcome_unknown'],
  }
  const cases = (Object.keys(failures) as Array<RequestFailure['reason']>).flatMap((reason) => phases.map((phase) => [reason, phase] as const))

  it.each(cases)('%s in phase %s', (reason, phase) => {
    const when = given(...histories[phase]).when({ type: 'RecordPaymentRequestFailed', failure: failures[reason], failedAt: at(9) })
    if (allowed[reason].includes(phase)) {
      const f = failures[reason]
      when.then([
        paymentRequestFailed.make({
          reason,
          code: 'code' in f ? f.code : null,
          message: 'message' in f ? f.message : f.reason === 'not_sent' ? f.detail : null,
          traceId: 'traceId' in f ? f.traceId : null,
          violations: f.reason === 'validation' ? [...f.violations] : [],
          failedAt: at(9),
        }),
      ])
    } else when.thenRejectsWith({ _tag: 'NoPaymentRequestPending', phase })
  })

  it.each(phases)('an unknown outcome in phase %s: recorded only while requested', (phase) => {
    const when = given(...histories[phase]).when({ type: 'RecordPaymentOutcomeUnknown', reason: 'http_5xx', httpStatus: 502, traceId: 't-5', since: at(3) })
    if (phase === 'requested') when.then([paymentOutcomeUnknown.make({ reason: 'http_5xx', httpStatus: 502, traceId: 't-5', since: at(3) })])
    else when.thenRejectsWith({ _tag: 'NoPaymentRequestPending', phase })
  })

  it('both need the order', () => {
    given().when({ type: 'RecordPaymentRequestFailed', failure: failures.not_sent, failedAt: at(9) }).thenRejectsWith({ _tag: 'OrderNotFound' })
    given().when({ type: 'RecordPaymentOutcomeUnknown', reason: 'timeout', httpStatus: null, traceId: null, since: at(3) }).thenRejectsWith({ _tag: 'OrderNotFound' })
  })
})

describe('observations that differ from the order in one field: a discrepancy naming that field, never applied', () => {
  const fields: ReadonlyArray<readonly [Mismatch['field'], Record<string, string>, Mismatch]> = [
    ['merchant_id', { merchant_id: OTHER_MERCHANT }, { field: 'merchant_id', expected: MERCHANT_ID, observed: OTHER_MERCHANT }],
    ['merchant_order_id', { merchant_order_id: 'ORDER-OTHER' }, { field: 'merchant_order_id', expected: ORDER_ID, observed: 'ORDER-OTHER' }],
    ['gateway_order_id', { order_id: OTHER_GATEWAY_ORDER }, { field: 'gateway_order_id', expected: GATEWAY_ORDER_ID, observed: OTHER_GATEWAY_ORDER }],
    ['amount', { order_amount: '99.00' }, { field: 'amount', expected: '10000', observed: '9900' }],
    ['currency', { order_currency: 'USD' }, { field: 'currency', expected: 'THB', observed: 'USD' }],
  ]

  it.each(fields)('a query answer with another %s', (_, change, m) => {
    const answer = aQueryAnswer(change)
    const key = paymentObservationKey('query', answer)
    given(...anAcceptedCheckout())
      .when(queried(answer))
      .then([discrepancyObserved.make({ source: 'query', observationKey: key, observedAt: at(6), statusCode: 'PS', mismatches: [m] })])
  })

  it.each(fields)('a notification with another %s: kept, with the discrepancy', (_, change, m) => {
    const n = aPaymentNotification(change)
    const key = paymentObservationKey('notification', n)
    given(...anAcceptedCheckout())
      .when(notified(n))
      .then([
        notificationReceived.make({ kind: 'PAYMENT', observationKey: key, receivedAt: at(5), payload: redactPayerData(n) }),
        discrepancyObserved.make({ source: 'notification', observationKey: key, observedAt: at(5), statusCode: 'PS', mismatches: [m] }),
      ])
  })

  it.each(fields)('a redirect with another %s: kept, with the discrepancy', (_, change, m) => {
    const form = aRedirectForm(change)
    const key = paymentObservationKey('redirect', form)
    given(...anAcceptedCheckout())
      .when(redirected(form))
      .then([
        redirectReceived.make({ kind: 'CHECKOUT', observationKey: key, status: 'PS', receivedAt: at(4), payload: redactPayerData(form) }),
        discrepancyObserved.make({ source: 'redirect', observationKey: key, observedAt: at(4), statusCode: 'PS', mismatches: [m] }),
      ])
  })

  it('an order whose gateway order id is not known yet takes any order_id', () => {
    const answer = aQueryAnswer({ order_id: OTHER_GATEWAY_ORDER, order_status: 'PI' })
    given(anOrderCreated(), aPaymentRequested()).when(queried(answer)).thenTypes('StatusObserved')
  })

  it('a query that agrees: StatusObserved with every field of the answer', () => {
    const answer = aQueryAnswer({ complete_time: '2026-01-01 10:04:00' })
    given(...anAcceptedCheckout())
      .when(queried(answer))
      .then([
        statusObserved.make({
          merchantId: MERCHANT_ID,
          merchantOrderId: ORDER_ID,
          gatewayOrderId: GATEWAY_ORDER_ID,
          statusCode: 'PS',
          classification: classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'PS'),
          amount: sat(10000n),
          currency: 'THB',
          observationKey: paymentObservationKey('query', answer),
          traceId: 'trace-query',
          completeTime: new Date('2026-01-01T03:04:00.000Z'),
          source: 'query',
          observedAt: at(6),
        }),
      ])
  })

  it('a different final status after a final one: a discrepancy of final_status, whole', () => {
    const paid = [...anAcceptedCheckout(), ...given(...anAcceptedCheckout()).when(notified(aPaymentNotification())).events()]
    const answer = aQueryAnswer({ order_status: 'PF' })
    const table = { ...DEFAULT_PAYMENT_STATUS_TABLE, PF: { meaning: 'failed', outcome: 'failed' as const } }
    given(...paid)
      .when(queried(answer, { statusTable: table }))
      .then([discrepancyObserved.make({ source: 'query', observationKey: paymentObservationKey('query', answer), observedAt: at(6), statusCode: 'PF', mismatches: [{ field: 'final_status', expected: 'PS', observed: 'PF' }] })])
  })

  it('the same final status again from another source is observed again', () => {
    const paid = [...anAcceptedCheckout(), ...given(...anAcceptedCheckout()).when(notified(aPaymentNotification())).events()]
    given(...paid).when(queried(aQueryAnswer())).thenTypes('StatusObserved')
  })

  it('the same redirect twice is one event', () => {
    const once = given(...anAcceptedCheckout()).when(redirected(aRedirectForm())).events()
    given(...anAcceptedCheckout(), ...once).when(redirected(aRedirectForm())).thenNothing()
  })

  it('observations of an order satang does not have are refused', () => {
    given().when(queried(aQueryAnswer())).thenRejectsWith({ _tag: 'OrderNotFound' })
    given().when(notified(aPaymentNotification())).thenRejectsWith({ _tag: 'OrderNotFound' })
    given().when(redirected(aRedirectForm())).thenRejectsWith({ _tag: 'OrderNotFound' })
  })
})

describe('a payment query that does not find the order', () => {
  const notFound = (code = 404001): OrderCommand => ({ type: 'ObservePaymentNotFound', code, message: 'order not found', traceId: 'trace-nf', observedAt: at(8) })
  const keyOf = (code: number) => notFoundObservationKey('payment', MERCHANT_ID, ORDER_ID, code)

  it('is kept once as QueryNotFound, whole', () => {
    given(...anAcceptedCheckout())
      .when(notFound())
      .then([queryNotFound.make({ kind: 'payment', code: 404001, message: 'order not found', traceId: 'trace-nf', observationKey: keyOf(404001), observedAt: at(8) })])
  })
  it('the same answer again records nothing; another not-found code is another observation', () => {
    const once = given(...anAcceptedCheckout()).when(notFound()).events()
    given(...anAcceptedCheckout(), ...once).when(notFound()).thenNothing()
    given(...anAcceptedCheckout(), ...once).when(notFound(404002)).thenTypes('QueryNotFound')
  })
  it('needs the order', () => {
    given().when(notFound()).thenRejectsWith({ _tag: 'OrderNotFound' })
  })
  it('fails no create by itself: the order stays as it was', () => {
    const s = given(anOrderCreated(), aPaymentRequested()).when(notFound()).state()
    expect(s._tag === 'Order' && s.request).toEqual({ phase: 'requested', requestedAt: at(1) })
    expect(s._tag === 'Order' && s.order.createdAt).toEqual(T0)
  })
})

describe('forged callbacks and the create answer of a direct payment', () => {
  it('a forged redirect or notification: CallbackRejected naming the callback, whole', () => {
    const form = aRedirectForm()
    given(...anAcceptedCheckout())
      .when(redirected(form, { verified: false }))
      .then([rejectCallback({ callback: 'checkout_redirect', reason: 'bad_signature', detail: 'bad signature', violations: [], callbackId: 'req-2', receivedAt: at(4), payload: form })])
    const n = aPaymentNotification()
    given(...anAcceptedCheckout())
      .when(notified(n, { verified: false }))
      .then([rejectCallback({ callback: 'payment_notification', reason: 'bad_signature', detail: 'signature does not match the gateway key', violations: [], callbackId: 'req-1', receivedAt: at(5), payload: n })])
  })

  it('a direct answer that names its time order_create_time: the create time is read from it', () => {
    const direct = anOrderCreated({ operation: 'direct', service: 'svc.thaiqr.pay' })
    const requested = paymentRequested.make({ operation: 'direct', service: 'svc.thaiqr.pay', request: redactPayerData(aDirectBody({ service: 'svc.thaiqr.pay' })), requestedAt: at(1) })
    const response = { order_id: GATEWAY_ORDER_ID, order_status: 'WP', order_amount: '100.00', order_currency: 'THB', order_create_time: '2026-01-01 10:02:00' }
    const events = given(direct, requested).when({ type: 'RecordPaymentAccepted', response, traceId: 'trace-create', receivedAt: at(2), statusTable: DEFAULT_PAYMENT_STATUS_TABLE }).events()
    expect(events).toMatchObject([{ type: 'PaymentRequestAccepted', data: { createTime: new Date('2026-01-01T03:02:00.000Z'), linkUrl: null } }])
  })
})
