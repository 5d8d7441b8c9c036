import { describe, expect, it } from 'vitest'
import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import {
  fold,
  needsReview,
  parseSubscriptionStreamName,
  subscriptionCancelled,
  subscriptionEventNaturalKey,
  subscriptionObservationKey,
  subscriptionRequested,
  subscriptionStatusOf,
  subscriptionStreamName,
  subscriptionSuspended,
  type Subscription,
  type SubscriptionState,
} from '../../../src/domain/subscription/index.ts'
import { at, MERCHANT_ID } from '../support/values.ts'
import {
  aCreateAnswer,
  aCreateRequest,
  anActiveSubscription,
  anUpdateRequest,
  aSubscriptionCreated,
  aSubscriptionNotification,
  aSubscriptionRedirect,
  aSubscriptionRequested,
  BILL_ID,
  given,
  MERCHANT_URLS,
  planOf,
  run,
  SUBSCRIBE_ID,
  subscriptionNotified,
  subscriptionRedirected,
} from './builders.ts'

const subscription = (s: SubscriptionState): Subscription => {
  if (s._tag !== 'Subscription') throw new Error('expected a subscription')
  return s
}

const failedOn = (date: string) => subscriptionNotified(aSubscriptionNotification({ status: 'FAIL', billing_date: date }))
const chargedOn = (date: string) => subscriptionNotified(aSubscriptionNotification({ status: 'SUCCESS', billing_date: date }))

const cancelRequest = { version: 'v1', service: 'svc.recurring.cancel', merchant_id: MERCHANT_ID, merchant_subscribe_id: SUBSCRIBE_ID } as const

describe('stream names', () => {
  it('subscription-<merchant_id>-<merchant_subscribe_id>', () => {
    expect(subscriptionStreamName(MERCHANT_ID, 'SUB-1')).toBe('subscription-140000000000000001-SUB-1')
    expect(parseSubscriptionStreamName('subscription-14000000000000000123-SUB-1')).toEqual({ merchantId: '14000000000000000123', merchantSubscribeId: 'SUB-1' })
  })
})

describe('create', () => {
  it('records SubscriptionRequested (the plan in satang, the wire fields redacted) before sending', () => {
    given()
      .when({ type: 'RequestSubscription', request: aCreateRequest(), merchantUrls: MERCHANT_URLS, requestedAt: at(0) })
      .then([aSubscriptionRequested()])
    expect(planOf(aCreateRequest())).toMatchObject({ billingAmount: 29900n, interval: 1, totalTerms: 12, startDate: '2026-01-15', startDateRequested: '2026-01-15' })
  })
  it('without start_date the plan starts on the Bangkok date of the request', () => {
    const { start_date: _, ...request } = aCreateRequest()
    const then = given().when({ type: 'RequestSubscription', request, merchantUrls: MERCHANT_URLS, requestedAt: new Date('2026-03-31T18:00:00.000Z') })
    expect(then.events()[0]).toMatchObject({ data: { plan: { startDate: '2026-04-01', startDateRequested: null } } })
  })
  it('twice is refused', () => {
    given(aSubscriptionRequested()).when({ type: 'RequestSubscription', request: aCreateRequest(), merchantUrls: MERCHANT_URLS, requestedAt: at(1) }).thenRejects('SubscriptionAlreadyExists')
  })
  it('the answer: CREATED with the link for the payer', () => {
    const then = given(aSubscriptionRequested()).when({ type: 'RecordSubscriptionCreated', response: aCreateAnswer(), traceId: 'trace-sub', receivedAt: at(0) })
    then.then([aSubscriptionCreated()])
    expect(subscriptionStatusOf(then.state())).toBe('CREATED')
    given(aSubscriptionRequested(), aSubscriptionCreated())
      .when({ type: 'RecordSubscriptionCreated', response: aCreateAnswer(), traceId: 'trace-sub', receivedAt: at(0) })
      .thenRejects('NoSubscriptionRequestPending')
  })
  it('a failed create is final', () => {
    const then = given(aSubscriptionRequested()).when({ type: 'RecordSubscriptionRequestFailed', failure: { reason: 'gateway_rejected', code: 409001, message: 'duplicate', traceId: 't' }, failedAt: at(0) })
    then.thenTypes('SubscriptionRequestFailed')
    expect(subscriptionStatusOf(then.state())).toBe('REQUEST_FAILED')
  })
})

describe('the payer authorises: the notification activates the subscription', () => {
  it('Created (SUCCESS): NotificationReceived, SubscriptionActivated; charges start', () => {
    const then = given(aSubscriptionRequested(), aSubscriptionCreated()).when(subscriptionNotified(aSubscriptionNotification({ type: 'Created' })))
    then.thenTypes('NotificationReceived', 'SubscriptionActivated')
    expect(subscriptionStatusOf(then.state())).toBe('ACTIVE')
    expect(subscription(then.state()).charges).toMatchObject({ termsCharged: 0, consecutiveFailures: 0, status: 'ACTIVE', nextAttempt: { year: 2026, month: 1, day: 15 } })
  })
  it('Created_Deducted: activated and charged at once', () => {
    given(aSubscriptionRequested(), aSubscriptionCreated())
      .when(subscriptionNotified(aSubscriptionNotification({ type: 'Created_Deducted', billing_date: '2026-01-15' })))
      .thenTypes('NotificationReceived', 'SubscriptionActivated', 'SubscriptionCharged')
  })
  it('the redirect form is evidence only: the subscription stays CREATED', () => {
    const then = given(aSubscriptionRequested(), aSubscriptionCreated()).when(subscriptionRedirected(aSubscriptionRedirect()))
    then.thenTypes('RedirectReceived')
    expect(subscriptionStatusOf(then.state())).toBe('CREATED')
  })
})

describe('charges from notifications', () => {
  it('a deduction: SubscriptionCharged with the reported amount', () => {
    const then = given(...anActiveSubscription()).when(chargedOn('2026-01-15'))
    then.thenTypes('NotificationReceived', 'SubscriptionCharged')
    expect(then.events()[1]).toMatchObject({ data: { billingDate: '2026-01-15', amount: 29900n, currency: 'THB', amountReported: true } })
    expect(subscription(then.state()).charges).toMatchObject({ termsCharged: 1, nextAttempt: { year: 2026, month: 2, day: 15 } })
  })
  it('the same notification twice is one event; the next month’s identical deduction is another', () => {
    const events = run(anActiveSubscription(), chargedOn('2026-01-15'))
    given(...events).when(chargedOn('2026-01-15')).thenNothing()
    given(...events).when(chargedOn('2026-02-15')).thenTypes('NotificationReceived', 'SubscriptionCharged')
  })
  it('a deduction whose amount disagrees with the plan is a discrepancy, not a charge', () => {
    const then = given(...anActiveSubscription()).when(subscriptionNotified(aSubscriptionNotification({ billing_amount: '300.00', billing_date: '2026-01-15' })))
    then.thenTypes('NotificationReceived', 'DiscrepancyObserved')
    expect(subscription(then.state()).charges?.termsCharged).toBe(0)
    expect(needsReview(then.state())).toBe(true)
  })
})

describe('three consecutive failed charges with retry = Y: SubscriptionSuspended', () => {
  it('the third failure suspends', () => {
    const twoFailures = run(anActiveSubscription(), failedOn('2026-01-15'), failedOn('2026-01-16'))
    expect(subscription(fold(twoFailures)).charges).toMatchObject({ consecutiveFailures: 2, status: 'ACTIVE', nextAttempt: { year: 2026, month: 1, day: 17 } })
    const then = given(...twoFailures).when(failedOn('2026-01-17'))
    const key = subscriptionObservationKey('notification', aSubscriptionNotification({ status: 'FAIL' }), '2026-01-17')
    then.thenTypes('NotificationReceived', 'SubscriptionChargeFailed', 'SubscriptionSuspended')
    expect(then.events()[2]).toEqual(
      subscriptionSuspended.make({ recurringBillId: BILL_ID, observationKey: key, consecutiveFailures: 3, reason: 'consecutive_failed_charges', suspendedAt: at(60) }),
    )
    expect(subscriptionStatusOf(then.state())).toBe('SUSPEND')
  })
  it('a success in between resets the count', () => {
    const events = run(anActiveSubscription(), failedOn('2026-01-15'), failedOn('2026-01-16'), chargedOn('2026-01-17'), failedOn('2026-02-15'), failedOn('2026-02-16'))
    expect(events.map((e) => e.type)).not.toContain('SubscriptionSuspended')
    expect(subscriptionStatusOf(fold(events))).toBe('ACTIVE')
  })
  it('a fourth failure reported after suspension suspends nothing again', () => {
    const suspended = run(anActiveSubscription(), failedOn('2026-01-15'), failedOn('2026-01-16'), failedOn('2026-01-17'))
    given(...suspended).when(failedOn('2026-01-18')).thenTypes('NotificationReceived', 'SubscriptionChargeFailed')
  })
})

describe('update', () => {
  const update = { type: 'RequestSubscriptionUpdate', request: anUpdateRequest(), requestedAt: at(100) } as const

  it('recorded before sending with the next request number; the answer puts the new plan in force', () => {
    const requested = given(...anActiveSubscription()).when(update)
    requested.then([
      subscriptionRequested.make({
        requestSeq: 2,
        operation: 'update',
        merchantId: MERCHANT_ID,
        merchantSubscribeId: SUBSCRIBE_ID,
        plan: planOf(anUpdateRequest()),
        merchantUrls: null,
        request: redactPayerData(anUpdateRequest()),
        requestedAt: at(100),
      }),
    ])
    const answer = { merchant_id: MERCHANT_ID, merchant_subscribe_id: SUBSCRIBE_ID, recurring_bill_id: BILL_ID, recurring_bill_status: 'ACTIVE', link_url: 'https://gateway.example/s/1' } as const
    const then = given(...anActiveSubscription(), ...requested.events()).when({ type: 'RecordSubscriptionUpdated', response: answer, traceId: 'trace-up', receivedAt: at(101) })
    then.thenTypes('SubscriptionUpdated')
    expect(subscription(then.state()).plan.billingAmount).toBe(34900n)
    expect(subscriptionStatusOf(then.state())).toBe('ACTIVE')
  })
  it('one request at a time; an update whose outcome is unknown may be requested again', () => {
    const requested = run(anActiveSubscription())
    const pending = [...requested, ...given(...requested).when(update).events()]
    given(...pending).when(update).thenRejects('SubscriptionRequestPending')
    const unknown = [...pending, ...given(...pending).when({ type: 'RecordSubscriptionOutcomeUnknown', reason: 'timeout', httpStatus: null, traceId: null, since: at(101) }).events()]
    given(...unknown).when(update).thenTypes('SubscriptionRequested')
  })
  it('not before the subscription exists at the gateway', () => {
    given(aSubscriptionRequested()).when(update).thenRejects('SubscriptionRequestPending')
    given().when(update).thenRejects('SubscriptionNotFound')
  })
})

describe('cancel: derived CANCELLED', () => {
  const cancel = { type: 'RequestSubscriptionCancel', request: cancelRequest, requestedAt: at(200) } as const

  it('requested, then the answer: SubscriptionCancelled and the status shows CANCELLED', () => {
    const requested = given(...anActiveSubscription()).when(cancel)
    requested.thenTypes('SubscriptionRequested')
    const then = given(...anActiveSubscription(), ...requested.events()).when({ type: 'RecordSubscriptionCancelled', traceId: 'trace-c', receivedAt: at(201) })
    then.then([subscriptionCancelled.make({ requestSeq: 2, traceId: 'trace-c', cancelledAt: at(201) })])
    expect(subscriptionStatusOf(then.state())).toBe('CANCELLED')
    expect(subscription(then.state()).charges).toMatchObject({ status: 'CANCELLED', nextAttempt: null })
  })
  it('cancelling a cancelled subscription sends nothing; updating it is refused', () => {
    const cancelled = [...anActiveSubscription(), ...given(...anActiveSubscription()).when(cancel).events()]
    const done = [...cancelled, ...given(...cancelled).when({ type: 'RecordSubscriptionCancelled', traceId: null, receivedAt: at(201) }).events()]
    given(...done).when(cancel).thenNothing()
    given(...done).when({ type: 'RequestSubscriptionUpdate', request: anUpdateRequest(), requestedAt: at(300) }).thenRejects('SubscriptionIsCancelled')
  })
})

describe('a create whose outcome is unknown (the gateway has no subscription query)', () => {
  const unknown = [aSubscriptionRequested(), ...given(aSubscriptionRequested()).when({ type: 'RecordSubscriptionOutcomeUnknown', reason: 'reset', httpStatus: null, traceId: null, since: at(0) }).events()]

  it('blocks every other request', () => {
    expect(subscriptionStatusOf(fold(unknown))).toBe('OUTCOME_UNKNOWN')
    given(...unknown).when({ type: 'RequestSubscriptionCancel', request: cancelRequest, requestedAt: at(1) }).thenRejects('SubscriptionRequestPending')
  })
  it('is resolved by a verified notification about the subscription', () => {
    const then = given(...unknown).when(subscriptionNotified(aSubscriptionNotification({ type: 'Created' })))
    then.thenTypes('NotificationReceived', 'SubscriptionCreated', 'SubscriptionActivated')
    expect(then.events()[1]).toMatchObject({ data: { resolvedBy: 'notification', recurringBillId: BILL_ID, requestSeq: 1 } })
    expect(subscriptionStatusOf(then.state())).toBe('ACTIVE')
  })
})

describe('callbacks whose signature does not verify', () => {
  it('only CallbackRejected, no state change', () => {
    const then = given(...anActiveSubscription()).when(subscriptionNotified(aSubscriptionNotification({ status: 'FAIL' }), { verified: false }))
    then.thenTypes('CallbackRejected')
    expect(then.state()).toEqual(fold(anActiveSubscription()))
  })
})

describe('natural keys', () => {
  it('are distinct within the stream', () => {
    const stream = subscriptionStreamName(MERCHANT_ID, SUBSCRIBE_ID)
    const events = run(anActiveSubscription(), failedOn('2026-01-15'), failedOn('2026-01-16'), failedOn('2026-01-17'))
    const keys = events.map((e) => subscriptionEventNaturalKey(stream, e))
    expect(new Set(keys).size).toBe(keys.length)
  })
})
