import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { formatCalendarDate, type CalendarDate } from '../../src/domain/bangkok-time.ts'
import type { Position } from '../../src/application/ports/event-store.ts'
import type { DiscrepancyObservedData } from '../../src/domain/events/common/discrepancy-observed.ts'
import type { Satang } from '../../src/domain/money.ts'
import { fold, initialSubscriptionState, subscriptionCancelled, type Subscription, type SubscriptionPlan, type SubscriptionState } from '../../src/domain/subscription/index.ts'
import type { ChargeState } from '../../src/domain/subscription-schedule.ts'
import { decodeSubscriptionState, decodeSubscriptionView, encodeSubscriptionState, encodeSubscriptionView, type SubscriptionView } from '../../src/projections/subscriptions/state.ts'
import { anActiveSubscription, aSubscriptionNotification, aSubscriptionRequested, run, subscriptionNotified } from '../domain/subscription/builders.ts'
import { at } from '../domain/support/values.ts'

/** Through JSON text, as PostgreSQL's jsonb keeps it. */
const viaJson = (u: unknown): unknown => JSON.parse(JSON.stringify(u)) as unknown

const withoutKeys = (s: SubscriptionState): SubscriptionState => (s._tag === 'Subscription' ? { ...s, observationKeys: new Set() } : s)

const instantArb = fc.date({ min: new Date('2000-01-01T00:00:00.000Z'), max: new Date('2100-12-31T23:59:59.999Z'), noInvalidDate: true })
const textArb = fc.string({ maxLength: 12 })
const satangArb = fc.bigInt({ min: 0n, max: 99_999_999n }).map((n) => n as Satang)
const calendarDateArb: fc.Arbitrary<CalendarDate> = instantArb.map((d) => ({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }))
const dateTextArb = calendarDateArb.map(formatCalendarDate)

const planArb: fc.Arbitrary<SubscriptionPlan> = fc.record({
  planName: textArb,
  planDesc: fc.option(textArb, { nil: null }),
  intervalType: fc.constantFrom('DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'),
  interval: fc.integer({ min: 1, max: 365 }),
  totalTerms: fc.integer({ min: 1, max: 999 }),
  billingAmount: satangArb,
  currency: textArb,
  retry: fc.constantFrom('Y', 'N'),
  startDate: dateTextArb,
  startDateRequested: fc.option(dateTextArb, { nil: null }),
})

const chargesArb: fc.Arbitrary<ChargeState> = fc.record(
  {
    termsCharged: fc.nat({ max: 999 }),
    consecutiveFailures: fc.nat({ max: 3 }),
    status: fc.constantFrom('ACTIVE', 'SUSPEND', 'COMPLETED', 'CANCELLED'),
    nextAttempt: fc.option(calendarDateArb, { nil: null }),
    termsSkipped: fc.nat({ max: 999 }),
  },
  { requiredKeys: ['termsCharged', 'consecutiveFailures', 'status', 'nextAttempt'] },
)

const discrepancyArb: fc.Arbitrary<DiscrepancyObservedData> = fc.record({
  source: fc.constantFrom('api_response', 'notification', 'query', 'redirect'),
  observationKey: textArb,
  observedAt: instantArb,
  statusCode: fc.option(textArb, { nil: null }),
  mismatches: fc.array(fc.record({ field: fc.constantFrom('amount', 'currency', 'recurring_bill_id', 'merchant_subscribe_id'), expected: textArb, observed: textArb }), { maxLength: 3 }),
})

const subscriptionArb: fc.Arbitrary<Subscription> = fc.record({
  _tag: fc.constant('Subscription'),
  merchantId: textArb,
  merchantSubscribeId: textArb,
  plan: planArb,
  merchantUrls: fc.record({ notifyUrl: fc.option(textArb, { nil: null }), redirectUrl: fc.option(textArb, { nil: null }) }),
  recurringBillId: fc.option(textArb, { nil: null }),
  linkUrl: fc.option(textArb, { nil: null }),
  lifecycle: fc.constantFrom('requested', 'request_failed', 'outcome_unknown', 'created', 'active', 'suspended', 'cancelled'),
  pending: fc.option(
    fc.record({
      requestSeq: fc.integer({ min: 1, max: 50 }),
      operation: fc.constantFrom('create', 'update', 'cancel'),
      plan: fc.option(planArb, { nil: null }),
      phase: fc.constantFrom('requested', 'outcome_unknown'),
      requestedAt: instantArb,
    }),
    { nil: null },
  ),
  lastRequestSeq: fc.integer({ min: 1, max: 50 }),
  charges: fc.option(chargesArb, { nil: null }),
  observationKeys: fc.array(textArb, { maxLength: 3 }).map((keys): ReadonlySet<string> => new Set(keys)),
  discrepancies: fc.array(discrepancyArb, { maxLength: 3 }),
})

const viewArb: fc.Arbitrary<SubscriptionView> = fc.record({
  state: subscriptionArb,
  createdAt: instantArb,
  chargesSucceeded: fc.nat(),
  chargesFailed: fc.nat(),
  lastChargeDate: fc.option(dateTextArb, { nil: null }),
  lastFailedChargeDate: fc.option(dateTextArb, { nil: null }),
  lastEventPosition: fc.bigInt({ min: 1n, max: 10n ** 19n }).map((n) => `${n.toString().padStart(20, '0')}-${n.toString().padStart(20, '0')}` as Position),
  updatedAt: instantArb,
})

const failedOn = (date: string) => subscriptionNotified(aSubscriptionNotification({ status: 'FAIL', billing_date: date }))
const chargedOn = (date: string) => subscriptionNotified(aSubscriptionNotification({ status: 'SUCCESS', billing_date: date }))

describe('the subscription state codec', () => {
  it('round-trips any state through JSON text (observationKeys are not kept)', () => {
    fc.assert(
      fc.property(subscriptionArb, (s) => {
        expect(decodeSubscriptionState(viaJson(encodeSubscriptionState(s)))).toEqual(withoutKeys(s))
      }),
    )
  })

  it('round-trips states the domain folds: requested, active, charged, retried, suspended, cancelled, with a discrepancy', () => {
    const active = anActiveSubscription()
    const charged = run(active, chargedOn('2026-01-15'))
    const retried = run(charged, failedOn('2026-02-15'))
    const suspended = run(retried, failedOn('2026-02-16'), failedOn('2026-02-17'))
    const disputed = run(active, subscriptionNotified(aSubscriptionNotification({ billing_amount: '1.00', billing_date: '2026-01-15' })))
    const cancelled = [...charged, subscriptionCancelled.make({ requestSeq: 2, traceId: null, cancelledAt: at(90) })]
    for (const events of [[aSubscriptionRequested()], active, charged, retried, suspended, disputed, cancelled]) {
      const state = fold(events)
      expect(state._tag).toBe('Subscription')
      expect(decodeSubscriptionState(viaJson(encodeSubscriptionState(state)))).toEqual(withoutKeys(state))
    }
    expect(encodeSubscriptionState(fold(retried))).toMatchObject({ charges: { termsCharged: 1, consecutiveFailures: 1, status: 'ACTIVE', nextAttempt: { year: 2026, month: 2, day: 16 } } })
  })

  it('keeps the plan as events carry it (satang as digit strings) and drops observationKeys', () => {
    const json = encodeSubscriptionState(fold(anActiveSubscription()))
    expect(json).toMatchObject({ plan: { billingAmount: '29900', startDate: '2026-01-15' }, lifecycle: 'active' })
    expect(json).not.toHaveProperty('observationKeys')
    expect(json).not.toHaveProperty('_tag')
  })

  it('no subscription is null, and null is no subscription', () => {
    expect(encodeSubscriptionState(initialSubscriptionState)).toBeNull()
    expect(decodeSubscriptionState(null)).toEqual(initialSubscriptionState)
  })

  it('refuses anything else, naming the field', () => {
    const json = encodeSubscriptionState(fold(anActiveSubscription()))
    expect(() => decodeSubscriptionState({ ...json, lifecycle: 'sleeping' })).toThrow(/lifecycle/)
    expect(() => decodeSubscriptionState({ ...json, charges: { termsCharged: 0, consecutiveFailures: 0, status: 'ACTIVE', nextAttempt: { year: 2026, month: 2, day: 30 } } })).toThrow(
      /charges/,
    )
    expect(() => decodeSubscriptionState([])).toThrow(/does not decode/)
  })
})

describe('the subscriptions projection view codec', () => {
  it('round-trips any view through JSON text', () => {
    fc.assert(
      fc.property(viewArb, (v) => {
        expect(decodeSubscriptionView(viaJson(encodeSubscriptionView(v)))).toEqual({ ...v, state: withoutKeys(v.state) })
      }),
    )
  })

  it('a view kept by another version asks for a rebuild', () => {
    const v = fc.sample(viewArb, 1)[0]
    if (v === undefined) throw new Error('no sample')
    expect(() => decodeSubscriptionView({ ...encodeSubscriptionView(v), version: 2 })).toThrow(/rebuild/)
  })
})
