import { describe, expect, it } from 'vitest'
import { rejectCallback } from '../../../src/domain/events/common/callback-rejected.ts'
import { discrepancyObserved, type Mismatch } from '../../../src/domain/events/common/discrepancy-observed.ts'
import { notificationReceived } from '../../../src/domain/events/common/notification-received.ts'
import { redirectReceived } from '../../../src/domain/events/common/redirect-received.ts'
import { keyOf } from '../../../src/domain/events/natural-key.ts'
import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import type { SubscriptionNotification } from '../../../src/domain/gateway/notification.ts'
import type { SubscriptionRedirectForm } from '../../../src/domain/gateway/redirect-forms.ts'
import {
  subscriptionCharged,
  subscriptionCreated,
  subscriptionOutcomeUnknown,
  subscriptionRequestFailed,
  subscriptionRequested,
  subscriptionObservationKey,
  type SubscriptionCommand,
  type SubscriptionEvent,
} from '../../../src/domain/subscription/index.ts'
import { at, MERCHANT_ID } from '../support/values.ts'
import {
  aCreateAnswer,
  aCreateRequest,
  anActiveSubscription,
  anUpdateRequest,
  aSubscriptionNotification,
  aSubscriptionRedirect,
  aSubscriptionRequested,
  BILL_ID,
  given,
  MERCHANT_URLS,
  planOf,
  SUBSCRIBE_ID,
  subscriptionNotified,
  subscriptionRedirected,
} from './builders.ts'

/*
 * Every identifier, amount and currency check of the subscription decider, each shown by a message
 * that differs in that one field only; rejections and events compared whole.
 */

const OTHER_MERCHANT = '140000000000000099'
const OTHER_BILL = '20260101000000000099'
const cancelRequest = { version: 'v1', service: 'svc.recurring.cancel', merchant_id: MERCHANT_ID, merchant_subscribe_id: SUBSCRIBE_ID } as const

const ids: ReadonlyArray<readonly [string, { readonly merchant_id?: string; readonly merchant_subscribe_id?: string }, Mismatch]> = [
  ['merchant_id', { merchant_id: OTHER_MERCHANT }, { field: 'merchant_id', expected: MERCHANT_ID, observed: OTHER_MERCHANT }],
  ['merchant_subscribe_id', { merchant_subscribe_id: 'SUB-OTHER' }, { field: 'merchant_subscribe_id', expected: SUBSCRIBE_ID, observed: 'SUB-OTHER' }],
]

describe('create', () => {
  it('a subscription that exists already: the rejection names it', () => {
    given(aSubscriptionRequested())
      .when({ type: 'RequestSubscription', request: aCreateRequest({ merchant_subscribe_id: 'SUB-2' }), merchantUrls: MERCHANT_URLS, requestedAt: at(1) })
      .thenRejectsWith({ _tag: 'SubscriptionAlreadyExists', merchantId: MERCHANT_ID, merchantSubscribeId: SUBSCRIBE_ID })
  })
  it('a plan that breaks a rule is refused with every violation', () => {
    given()
      .when({ type: 'RequestSubscription', request: aCreateRequest({ interval: '0', billing_amount: 'abc' }), merchantUrls: MERCHANT_URLS, requestedAt: at(1) })
      .thenRejectsWith({
        _tag: 'InvalidPlan',
        violations: [
          { path: 'interval', rule: 'must be a whole number of at least 1' },
          { path: 'billing_amount', rule: 'must be an amount' },
        ],
      })
  })
})

describe('update and cancel must name this subscription', () => {
  it.each(ids)('an update with another %s is refused, naming it', (_, change, m) => {
    given(...anActiveSubscription())
      .when({ type: 'RequestSubscriptionUpdate', request: anUpdateRequest(change), requestedAt: at(100) })
      .thenRejectsWith({ _tag: 'RequestDoesNotMatchSubscription', mismatches: [m] })
  })
  it.each(ids)('a cancel with another %s is refused, naming it', (_, change, m) => {
    given(...anActiveSubscription())
      .when({ type: 'RequestSubscriptionCancel', request: { ...cancelRequest, ...change }, requestedAt: at(100) })
      .thenRejectsWith({ _tag: 'RequestDoesNotMatchSubscription', mismatches: [m] })
  })
  it('a cancel of this subscription: SubscriptionRequested with the next request number, whole', () => {
    given(...anActiveSubscription())
      .when({ type: 'RequestSubscriptionCancel', request: cancelRequest, requestedAt: at(100) })
      .then([
        subscriptionRequested.make({
          requestSeq: 2,
          operation: 'cancel',
          merchantId: MERCHANT_ID,
          merchantSubscribeId: SUBSCRIBE_ID,
          plan: null,
          merchantUrls: null,
          request: redactPayerData(cancelRequest),
          requestedAt: at(100),
        }),
      ])
  })
  it('an update whose plan breaks a rule is refused', () => {
    given(...anActiveSubscription())
      .when({ type: 'RequestSubscriptionUpdate', request: anUpdateRequest({ total_terms: '0' }), requestedAt: at(100) })
      .thenRejectsWith({ _tag: 'InvalidPlan', violations: [{ path: 'total_terms', rule: 'must be a whole number of at least 1' }] })
  })
  it('before the create is answered: the rejection names the pending create', () => {
    given(aSubscriptionRequested())
      .when({ type: 'RequestSubscriptionCancel', request: cancelRequest, requestedAt: at(1) })
      .thenRejectsWith({ _tag: 'SubscriptionRequestPending', operation: 'create', phase: 'requested' })
  })
  it('after a failed create: not created, with its lifecycle', () => {
    const failed = [aSubscriptionRequested(), ...given(aSubscriptionRequested()).when({ type: 'RecordSubscriptionRequestFailed', failure: { reason: 'not_sent', detail: 'refused' }, failedAt: at(1) }).events()]
    given(...failed).when({ type: 'RequestSubscriptionCancel', request: cancelRequest, requestedAt: at(2) }).thenRejectsWith({ _tag: 'SubscriptionNotCreated', lifecycle: 'request_failed' })
    given(...failed).when({ type: 'RequestSubscriptionUpdate', request: anUpdateRequest(), requestedAt: at(2) }).thenRejectsWith({ _tag: 'SubscriptionNotCreated', lifecycle: 'request_failed' })
  })
  it('needs the subscription', () => {
    given().when({ type: 'RequestSubscriptionCancel', request: cancelRequest, requestedAt: at(1) }).thenRejectsWith({ _tag: 'SubscriptionNotFound' })
  })
})

describe('the create answer: another id is a discrepancy naming it, never dropped', () => {
  const answered = (o: Parameters<typeof aCreateAnswer>[0]): SubscriptionCommand => ({ type: 'RecordSubscriptionCreated', response: aCreateAnswer(o), traceId: 'trace-sub', receivedAt: at(2) })
  const createdOf = (o: Parameters<typeof aCreateAnswer>[0]): SubscriptionEvent => {
    const r = aCreateAnswer(o)
    return subscriptionCreated.make({
      requestSeq: 1,
      recurringBillId: r.recurring_bill_id,
      gatewayStatus: r.recurring_bill_status,
      linkUrl: r.link_url,
      createTime: new Date('2026-01-01T03:00:00.000Z'),
      traceId: 'trace-sub',
      resolvedBy: 'api_response',
      response: redactPayerData(r),
      receivedAt: at(2),
    })
  }
  it('the same subscription: SubscriptionCreated, whole', () => {
    given(aSubscriptionRequested()).when(answered({})).then([createdOf({})])
  })
  it.each(ids)('another %s', (_, change, m) => {
    given(aSubscriptionRequested())
      .when(answered(change))
      .then([createdOf(change), discrepancyObserved.make({ source: 'api_response', observationKey: keyOf('api_response', '1'), observedAt: at(2), statusCode: 'CREATED', mismatches: [m] })])
  })
  it('no create waiting: the rejection says a create was expected', () => {
    given(...anActiveSubscription()).when(answered({})).thenRejectsWith({ _tag: 'NoSubscriptionRequestPending', expected: 'create' })
    given(...anActiveSubscription()).when({ type: 'RecordSubscriptionCancelled', traceId: null, receivedAt: at(3) }).thenRejectsWith({ _tag: 'NoSubscriptionRequestPending', expected: 'cancel' })
    given(...anActiveSubscription())
      .when({ type: 'RecordSubscriptionUpdated', response: { ...aCreateAnswer(), recurring_bill_status: 'ACTIVE' }, traceId: 't', receivedAt: at(3) })
      .thenRejectsWith({ _tag: 'NoSubscriptionRequestPending', expected: 'update' })
    given(...anActiveSubscription()).when({ type: 'RecordSubscriptionOutcomeUnknown', reason: 'timeout', httpStatus: null, traceId: null, since: at(3) }).thenRejectsWith({ _tag: 'NoSubscriptionRequestPending', expected: 'any' })
    given(...anActiveSubscription())
      .when({ type: 'RecordSubscriptionRequestFailed', failure: { reason: 'not_sent', detail: 'x' }, failedAt: at(3) })
      .thenRejectsWith({ _tag: 'NoSubscriptionRequestPending', expected: 'any' })
  })
  it('a failed or unknown create is recorded with its request number and operation, whole', () => {
    given(aSubscriptionRequested())
      .when({ type: 'RecordSubscriptionRequestFailed', failure: { reason: 'gateway_rejected', code: 400001, message: 'bad plan', traceId: 't-f' }, failedAt: at(3) })
      .then([subscriptionRequestFailed.make({ requestSeq: 1, operation: 'create', reason: 'gateway_rejected', code: 400001, message: 'bad plan', traceId: 't-f', violations: [], failedAt: at(3) })])
    given(aSubscriptionRequested())
      .when({ type: 'RecordSubscriptionOutcomeUnknown', reason: 'timeout', httpStatus: 504, traceId: 't-u', since: at(3) })
      .then([subscriptionOutcomeUnknown.make({ requestSeq: 1, operation: 'create', reason: 'timeout', httpStatus: 504, traceId: 't-u', since: at(3) })])
  })
})

describe('callbacks that differ from the subscription in one field: a discrepancy naming it, nothing applied', () => {
  const fields: ReadonlyArray<readonly [string, Partial<SubscriptionNotification>, Mismatch]> = [
    ...ids,
    ['recurring_bill_id', { recurring_bill_id: OTHER_BILL }, { field: 'recurring_bill_id', expected: BILL_ID, observed: OTHER_BILL }],
    ['amount', { billing_amount: '298.99' }, { field: 'amount', expected: '29900', observed: '29899' }],
    ['currency', { billing_currency: 'USD' }, { field: 'currency', expected: 'THB', observed: 'USD' }],
  ]

  it.each(fields)('a notification with another %s', (_, change, m) => {
    const n = aSubscriptionNotification({ ...change, billing_date: '2026-02-15' })
    const key = subscriptionObservationKey('notification', n, '2026-02-15')
    given(...anActiveSubscription())
      .when(subscriptionNotified(n))
      .then([
        notificationReceived.make({ kind: 'SUBSCRIPTION', observationKey: key, receivedAt: at(60), payload: redactPayerData(n) }),
        discrepancyObserved.make({ source: 'notification', observationKey: key, observedAt: at(60), statusCode: 'SUCCESS', mismatches: [m] }),
      ])
  })

  it.each(fields)('a redirect with another %s', (_, change, m) => {
    const form: SubscriptionRedirectForm = aSubscriptionRedirect(change)
    const key = subscriptionObservationKey('redirect', form, '2026-01-01')
    given(...anActiveSubscription())
      .when(subscriptionRedirected(form))
      .then([
        redirectReceived.make({ kind: 'SUBSCRIPTION', observationKey: key, status: 'SUCCESS', receivedAt: at(61), payload: redactPayerData(form) }),
        discrepancyObserved.make({ source: 'redirect', observationKey: key, observedAt: at(61), statusCode: 'SUCCESS', mismatches: [m] }),
      ])
  })

  it('an amount that is not one is named as unreadable', () => {
    const n = aSubscriptionNotification({ billing_amount: 'lots', billing_date: '2026-02-15' })
    given(...anActiveSubscription())
      .when(subscriptionNotified(n))
      .thenTypes('NotificationReceived', 'DiscrepancyObserved')
  })

  it('a deduction that reports no amount or currency is charged the plan’s, marked not reported', () => {
    const n = aSubscriptionNotification({ billing_amount: '', billing_currency: null, billing_date: '2026-02-15' })
    const key = subscriptionObservationKey('notification', n, '2026-02-15')
    given(...anActiveSubscription())
      .when(subscriptionNotified(n))
      .then([
        notificationReceived.make({ kind: 'SUBSCRIPTION', observationKey: key, receivedAt: at(60), payload: redactPayerData(n) }),
        subscriptionCharged.make({ recurringBillId: BILL_ID, observationKey: key, notificationType: 'Deducted', billingDate: '2026-02-15', amount: planOf(aCreateRequest()).billingAmount, currency: 'THB', amountReported: false, observedAt: at(60) }),
      ])
  })

  it('a deduction that agrees: SubscriptionCharged with the reported amount, whole', () => {
    const n = aSubscriptionNotification({ billing_amount: '299', billing_date: '2026-02-15' })
    const key = subscriptionObservationKey('notification', n, '2026-02-15')
    given(...anActiveSubscription())
      .when(subscriptionNotified(n))
      .then([
        notificationReceived.make({ kind: 'SUBSCRIPTION', observationKey: key, receivedAt: at(60), payload: redactPayerData(n) }),
        subscriptionCharged.make({ recurringBillId: BILL_ID, observationKey: key, notificationType: 'Deducted', billingDate: '2026-02-15', amount: planOf(aCreateRequest()).billingAmount, currency: 'THB', amountReported: true, observedAt: at(60) }),
      ])
  })

  it('a redirect that agrees is kept and changes nothing else; the same one again is nothing', () => {
    const form = aSubscriptionRedirect()
    const once = given(...anActiveSubscription()).when(subscriptionRedirected(form))
    once.thenTypes('RedirectReceived')
    given(...anActiveSubscription(), ...once.events()).when(subscriptionRedirected(form)).thenNothing()
  })

  it('callbacks about a subscription satang does not have are refused', () => {
    given().when(subscriptionNotified(aSubscriptionNotification())).thenRejectsWith({ _tag: 'SubscriptionNotFound' })
    given().when(subscriptionRedirected(aSubscriptionRedirect())).thenRejectsWith({ _tag: 'SubscriptionNotFound' })
  })
})

describe('answers and notifications that arrive in another order', () => {
  const created = { type: 'RecordSubscriptionCreated', response: aCreateAnswer(), traceId: 'trace-sub', receivedAt: at(2) } as const
  const activatedFirst = (): ReadonlyArray<SubscriptionEvent> => [aSubscriptionRequested(), ...given(aSubscriptionRequested()).when(subscriptionNotified(aSubscriptionNotification({ type: 'Created' }))).events()]

  it('a notification before the create answer activates the subscription but does not create it', () => {
    given(aSubscriptionRequested()).when(subscriptionNotified(aSubscriptionNotification({ type: 'Created' }))).thenTypes('NotificationReceived', 'SubscriptionActivated')
  })
  it('the create answer after it: another recurring_bill_id is a discrepancy naming it', () => {
    given(...activatedFirst())
      .when({ ...created, response: aCreateAnswer({ recurring_bill_id: OTHER_BILL }) })
      .thenTypes('SubscriptionCreated', 'DiscrepancyObserved')
    const events = given(...activatedFirst())
      .when({ ...created, response: aCreateAnswer({ recurring_bill_id: OTHER_BILL }) })
      .events()
    expect(events[1]).toMatchObject({ data: { mismatches: [{ field: 'recurring_bill_id', expected: BILL_ID, observed: OTHER_BILL }] } })
    given(...activatedFirst()).when(created).thenTypes('SubscriptionCreated')
  })
  it('a create answer after the outcome was recorded unknown is refused; so is one while an update waits', () => {
    const unknown = [aSubscriptionRequested(), ...given(aSubscriptionRequested()).when({ type: 'RecordSubscriptionOutcomeUnknown', reason: 'reset', httpStatus: null, traceId: null, since: at(1) }).events()]
    given(...unknown).when(created).thenRejectsWith({ _tag: 'NoSubscriptionRequestPending', expected: 'create' })
    const updating = [...anActiveSubscription(), ...given(...anActiveSubscription()).when({ type: 'RequestSubscriptionUpdate', request: anUpdateRequest(), requestedAt: at(100) }).events()]
    given(...updating).when(created).thenRejectsWith({ _tag: 'NoSubscriptionRequestPending', expected: 'create' })
    given(...updating).when({ type: 'RecordSubscriptionCancelled', traceId: null, receivedAt: at(101) }).thenRejectsWith({ _tag: 'NoSubscriptionRequestPending', expected: 'cancel' })
  })
  it('a failed authorisation (Created, FAIL) activates nothing', () => {
    const createdOnly = [aSubscriptionRequested(), ...given(aSubscriptionRequested()).when(created).events()]
    given(...createdOnly).when(subscriptionNotified(aSubscriptionNotification({ type: 'Created', status: 'FAIL' }))).thenTypes('NotificationReceived')
  })
})

describe('callbacks refused', () => {
  it('a forged notification or redirect: CallbackRejected naming the callback, whole', () => {
    const n = aSubscriptionNotification()
    given(...anActiveSubscription())
      .when(subscriptionNotified(n, { verified: false }))
      .then([rejectCallback({ callback: 'subscription_notification', reason: 'bad_signature', detail: 'bad signature', violations: [], callbackId: 'req-s1', receivedAt: at(60), payload: n })])
    const form = aSubscriptionRedirect()
    given(...anActiveSubscription())
      .when({ ...subscriptionRedirected(form), signature: { verified: false, reason: 'bad signature' } })
      .then([rejectCallback({ callback: 'subscription_redirect', reason: 'bad_signature', detail: 'bad signature', violations: [], callbackId: 'req-s2', receivedAt: at(61), payload: form })])
  })
})
