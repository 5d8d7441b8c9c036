import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import { billingPlanOf, planOfRequest } from '../../../src/domain/subscription/plan.ts'
import {
  fold,
  subscriptionActivated,
  subscriptionCancelled,
  subscriptionChargeFailed,
  subscriptionCharged,
  subscriptionCreated,
  subscriptionOutcomeUnknown,
  subscriptionRequestFailed,
  subscriptionRequested,
  subscriptionSuspended,
  subscriptionUpdated,
  type Subscription,
  type SubscriptionEvent,
} from '../../../src/domain/subscription/index.ts'
import { at, MERCHANT_ID, sat } from '../support/values.ts'
import { aCreateRequest, anUpdateRequest, aSubscriptionCreated, aSubscriptionRequested, BILL_ID, MERCHANT_URLS, planOf, SUBSCRIBE_ID } from './builders.ts'

/** The subscription state event by event: what each event changes, and what it leaves as it was. */

const PLAN = planOf(aCreateRequest())
const subscription = (events: ReadonlyArray<SubscriptionEvent>): Subscription => {
  const s = fold(events)
  if (s._tag !== 'Subscription') throw new Error('no subscription')
  return s
}
const created = (o: { gatewayStatus?: 'CREATED' | 'ACTIVE' | 'SUSPEND'; linkUrl?: string | null; recurringBillId?: string } = {}): SubscriptionEvent =>
  subscriptionCreated.make({
    requestSeq: 1,
    recurringBillId: o.recurringBillId ?? BILL_ID,
    gatewayStatus: o.gatewayStatus ?? 'CREATED',
    linkUrl: o.linkUrl === undefined ? 'https://gateway.example/s/1' : o.linkUrl,
    createTime: null,
    traceId: null,
    resolvedBy: 'api_response',
    response: null,
    receivedAt: at(1),
  })
const requested = (operation: 'update' | 'cancel', seq = 2): SubscriptionEvent =>
  subscriptionRequested.make({ requestSeq: seq, operation, merchantId: MERCHANT_ID, merchantSubscribeId: SUBSCRIBE_ID, plan: operation === 'update' ? planOf(anUpdateRequest()) : null, merchantUrls: null, request: redactPayerData({}), requestedAt: at(5) })
const activated = (key = 'act'): SubscriptionEvent => subscriptionActivated.make({ recurringBillId: 'OTHER-BILL', observationKey: key, notificationType: 'Created', activatedAt: at(2) })
const unknown = (operation: 'create' | 'update', seq = 1): SubscriptionEvent => subscriptionOutcomeUnknown.make({ requestSeq: seq, operation, reason: 'timeout', httpStatus: null, traceId: null, since: at(3) })
const failed = (operation: 'create' | 'update', seq = 1): SubscriptionEvent =>
  subscriptionRequestFailed.make({ requestSeq: seq, operation, reason: 'not_sent', code: null, message: 'x', traceId: null, violations: [], failedAt: at(3) })
const charge = (billingDate: string): SubscriptionEvent =>
  subscriptionCharged.make({ recurringBillId: BILL_ID, observationKey: `c-${billingDate}`, notificationType: 'Deducted', billingDate, amount: sat(29900n), currency: 'THB', amountReported: true, observedAt: at(60) })
const failure = (billingDate: string): SubscriptionEvent => subscriptionChargeFailed.make({ recurringBillId: BILL_ID, observationKey: `f-${billingDate}`, notificationType: 'Deducted', billingDate, observedAt: at(60) })
const suspended = (): SubscriptionEvent => subscriptionSuspended.make({ recurringBillId: BILL_ID, observationKey: 'sus', consecutiveFailures: 3, reason: 'consecutive_failed_charges', suspendedAt: at(70) })
const cancelled = (): SubscriptionEvent => subscriptionCancelled.make({ requestSeq: 2, traceId: null, cancelledAt: at(80) })

describe('before the subscription exists', () => {
  it('only the create request makes it; any other event, or a create without a plan, leaves nothing', () => {
    expect(fold([requested('update'), created(), activated()])).toEqual({ _tag: 'NoSubscription' })
    expect(fold([subscriptionRequested.make({ requestSeq: 1, operation: 'create', merchantId: MERCHANT_ID, merchantSubscribeId: SUBSCRIBE_ID, plan: null, merchantUrls: MERCHANT_URLS, request: redactPayerData({}), requestedAt: at(0) })])).toEqual({ _tag: 'NoSubscription' })
  })
  it('the create request: the whole state', () => {
    expect(fold([aSubscriptionRequested()])).toEqual({
      _tag: 'Subscription',
      merchantId: MERCHANT_ID,
      merchantSubscribeId: SUBSCRIBE_ID,
      plan: PLAN,
      merchantUrls: MERCHANT_URLS,
      recurringBillId: null,
      linkUrl: null,
      lifecycle: 'requested',
      pending: { requestSeq: 1, operation: 'create', plan: PLAN, phase: 'requested', requestedAt: at(0) },
      lastRequestSeq: 1,
      charges: null,
      observationKeys: new Set(),
      discrepancies: [],
    })
  })
  it('a create request without merchant URLs keeps none', () => {
    const e = subscriptionRequested.make({ requestSeq: 1, operation: 'create', merchantId: MERCHANT_ID, merchantSubscribeId: SUBSCRIBE_ID, plan: PLAN, merchantUrls: null, request: redactPayerData({}), requestedAt: at(0) })
    expect(subscription([e]).merchantUrls).toEqual({ notifyUrl: null, redirectUrl: null })
  })
})

describe('requests and their answers', () => {
  it('a second create request changes nothing', () => {
    const once = subscription([aSubscriptionRequested()])
    expect(subscription([aSubscriptionRequested(), aSubscriptionRequested()])).toEqual(once)
  })
  it.each([
    ['CREATED', 'created'],
    ['ACTIVE', 'active'],
    ['SUSPEND', 'suspended'],
  ] as const)('the create answered %s while waiting: %s, its bill id and link, nothing pending', (gatewayStatus, lifecycle) => {
    expect(subscription([aSubscriptionRequested(), created({ gatewayStatus })])).toMatchObject({ lifecycle, recurringBillId: BILL_ID, linkUrl: 'https://gateway.example/s/1', pending: null })
  })
  it('a create answer after the payer authorised: the lifecycle, the bill id already known, stay', () => {
    const s = subscription([aSubscriptionRequested(), activated(), created({ gatewayStatus: 'CREATED', recurringBillId: 'LATE-BILL' })])
    expect(s).toMatchObject({ lifecycle: 'active', recurringBillId: 'OTHER-BILL' })
  })
  it('a create answer without a link keeps the link known; an update waiting stays waiting', () => {
    const s = subscription([aSubscriptionRequested(), created(), requested('update'), created({ linkUrl: null })])
    expect(s.linkUrl).toBe('https://gateway.example/s/1')
    expect(s.pending).toMatchObject({ operation: 'update', phase: 'requested' })
  })
  it('an update answered: the new plan, the lifecycle it reports, billing restarted; the link kept when none comes', () => {
    const update = planOf(anUpdateRequest())
    const s = subscription([...[aSubscriptionRequested(), aSubscriptionCreated()], activated(), charge('2026-01-15'), requested('update'), subscriptionUpdated.make({ requestSeq: 2, recurringBillId: BILL_ID, gatewayStatus: 'SUSPEND', linkUrl: null, traceId: 't-up', plan: update, response: redactPayerData({}), receivedAt: at(9) })])
    expect(s).toMatchObject({ plan: update, lifecycle: 'suspended', pending: null, linkUrl: 'https://gateway.example/subscriptions/20260101000000000001', charges: { termsCharged: 0, status: 'ACTIVE' } })
  })
  it('a failed create fails the subscription; a failed update leaves its lifecycle', () => {
    expect(subscription([aSubscriptionRequested(), failed('create')])).toMatchObject({ lifecycle: 'request_failed', pending: null })
    expect(subscription([aSubscriptionRequested(), aSubscriptionCreated(), requested('update'), failed('update', 2)])).toMatchObject({ lifecycle: 'created', pending: null })
  })
  it('an unknown outcome: the pending request is marked so; only a requested create makes the subscription unknown', () => {
    expect(subscription([aSubscriptionRequested(), unknown('create')])).toMatchObject({ lifecycle: 'outcome_unknown', pending: { operation: 'create', phase: 'outcome_unknown' } })
    expect(subscription([aSubscriptionRequested(), aSubscriptionCreated(), requested('update'), unknown('update', 2)])).toMatchObject({ lifecycle: 'created', pending: { operation: 'update', phase: 'outcome_unknown' } })
    // A late "unknown create" after the create was answered changes no lifecycle, and nothing is pending.
    expect(subscription([aSubscriptionRequested(), aSubscriptionCreated(), unknown('create')])).toMatchObject({ lifecycle: 'created', pending: null })
  })
})

describe('charges and their outcomes', () => {
  const active = (): ReadonlyArray<SubscriptionEvent> => [aSubscriptionRequested(), aSubscriptionCreated(), activated()]

  it('a charge and a failure move the schedule; a billing date that is not one moves nothing', () => {
    const s = subscription([...active(), charge('2026-01-15'), failure('2026-02-15')])
    expect(s.charges).toMatchObject({ termsCharged: 1, consecutiveFailures: 1, status: 'ACTIVE', nextAttempt: { year: 2026, month: 2, day: 16 } })
    expect(subscription([...active(), charge('2026-02-30')]).charges).toEqual(subscription(active()).charges)
    expect(subscription([...active(), charge('2026-02-30')]).observationKeys.has('c-2026-02-30')).toBe(true)
  })
  it('a charge before the payer authorised schedules nothing', () => {
    expect(subscription([aSubscriptionRequested(), aSubscriptionCreated(), charge('2026-01-15')]).charges).toBeNull()
  })
  it('suspended, unless already cancelled', () => {
    expect(subscription([...active(), suspended()]).lifecycle).toBe('suspended')
    expect(subscription([...active(), cancelled(), suspended()]).lifecycle).toBe('cancelled')
  })
  it('cancelled: no schedule stays no schedule; a schedule is cancelled', () => {
    expect(subscription([aSubscriptionRequested(), aSubscriptionCreated(), cancelled()])).toMatchObject({ lifecycle: 'cancelled', pending: null, charges: null })
    expect(subscription([...active(), cancelled()]).charges).toMatchObject({ status: 'CANCELLED', nextAttempt: null })
  })
})

describe('plans', () => {
  it('interval and total_terms: whole numbers of at least 1, digits only', () => {
    for (const bad of ['0', '1a', 'a1', ' 1', '1 ', '1.5', '-1', '', '99999999999999999999']) {
      expect(planOfRequest(aCreateRequest({ interval: bad }), at(0))).toEqual(E.left([{ path: 'interval', rule: 'must be a whole number of at least 1' }]))
    }
    expect(planOfRequest(aCreateRequest({ total_terms: '0', interval: '0' }), at(0))).toEqual(
      E.left([
        { path: 'interval', rule: 'must be a whole number of at least 1' },
        { path: 'total_terms', rule: 'must be a whole number of at least 1' },
      ]),
    )
    expect(planOfRequest(aCreateRequest({ interval: '01' }), at(0))).toMatchObject({ _tag: 'Right', right: { interval: 1 } })
  })
  it('billingPlanOf: null for a plan no codec lets through', () => {
    expect(billingPlanOf(PLAN)).toEqual({ startDate: { year: 2026, month: 1, day: 15 }, intervalType: 'MONTHLY', interval: 1, totalTerms: 12, retry: 'Y' })
    for (const bad of [{ startDate: '2026-02-30' }, { startDate: 'soon' }, { interval: 0 }, { interval: 1.5 }, { totalTerms: -1 }, { totalTerms: 0.5 }]) {
      expect([bad, billingPlanOf({ ...PLAN, ...bad })]).toEqual([bad, null])
    }
    expect(billingPlanOf({ ...PLAN, totalTerms: 0 })).toMatchObject({ totalTerms: 0 })
  })
})

describe('events that find the subscription in an unexpected state', () => {
  const createRequested = (plan = PLAN, seq = 1): SubscriptionEvent =>
    subscriptionRequested.make({ requestSeq: seq, operation: 'create', merchantId: MERCHANT_ID, merchantSubscribeId: SUBSCRIBE_ID, plan, merchantUrls: MERCHANT_URLS, request: redactPayerData({}), requestedAt: at(0) })
  it('given a subscription, when a second create request comes, then nothing changes', () => {
    expect(subscription([createRequested(), createRequested(PLAN, 2)])).toEqual(subscription([createRequested()]))
  })
  it('given a create that failed, when the gateway says it was created after all, then it keeps its lifecycle and has no request pending', () => {
    const before = subscription([createRequested(), failed('create')])
    expect(subscription([createRequested(), failed('create'), created()])).toEqual({ ...before, recurringBillId: BILL_ID, linkUrl: 'https://gateway.example/s/1', pending: null, lifecycle: 'request_failed' })
  })
  it('given a create still requested, when an update outcome turns unknown, then the lifecycle stays requested', () => {
    const before = subscription([createRequested()])
    expect(subscription([createRequested(), unknown('update', 2)])).toEqual({ ...before, pending: { ...before.pending, phase: 'outcome_unknown' }, lifecycle: 'requested' })
  })
  it('given no subscription, when a create fails or turns unknown, then there is still none', () => {
    expect([fold([failed('create')]), fold([unknown('create')])]).toEqual([{ _tag: 'NoSubscription' }, { _tag: 'NoSubscription' }])
  })
  it('given a plan whose start date is no calendar date, when activated, then no charge schedule starts', () => {
    const plan = { ...PLAN, startDate: '2026-02-30' }
    const before = subscription([createRequested(plan)])
    expect(subscription([createRequested(plan), activated()])).toEqual({ ...before, recurringBillId: 'OTHER-BILL', lifecycle: 'active', charges: null, observationKeys: new Set(['act']) })
  })
})
