import { describe, expect, it } from 'vitest'
import { subscriptionChargeFailed, subscriptionCharged, subscriptionCancelled, subscriptionSuspended, subscriptionUpdated, type SubscriptionEvent } from '../../../src/domain/subscription/index.ts'
import { checkBilling, subscriptionItemOf, type ChargeObservation, type SubscriptionItem } from '../../../src/domain/reconciliation/subscription-billing.ts'
import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import * as sub from '../subscription/builders.ts'
import { at, MERCHANT_ID, sat } from '../support/values.ts'

/** Subscription billing, each date's whole verdict and both sides' views, at the edges of its rules. */

const DAY = 86_400_000
const STREAM = `subscription-${MERCHANT_ID}-SUB-1`
const POLICY = { asOf: new Date('2026-06-01T12:00:00+07:00'), chargeGraceMs: DAY }

const monthly = (o: Partial<SubscriptionItem> = {}): SubscriptionItem => ({
  kind: 'subscription',
  merchantId: MERCHANT_ID,
  merchantSubscribeId: 'SUB-1',
  stream: STREAM,
  plan: { startDate: { year: 2026, month: 1, day: 31 }, intervalType: 'MONTHLY', interval: 1, totalTerms: 3, retry: 'Y' },
  billingAmount: sat(29900n),
  currency: 'THB',
  activated: true,
  cancelledOn: null,
  suspendedOn: null,
  observations: [],
  ...o,
})
const ok = (date: string, amount = 29900n): ChargeObservation => ({ date, outcome: 'success', amount })
const fail = (date: string): ChargeObservation => ({ date, outcome: 'failure', amount: 0n })
const dates = (...ds: ReadonlyArray<string>): ReadonlySet<string> => new Set(ds)
const expected = (date: string, what: string) => ({ date, expected: what, billing_amount_satang: '29900', currency: 'THB' })

describe('checkBilling, whole', () => {
  it('a charge observed on its due date: matched, with both views', () => {
    expect(checkBilling(monthly({ observations: [ok('2026-01-31')] }), dates('2026-01-31'), POLICY)).toEqual([
      { date: '2026-01-31', comparison: { _tag: 'Matched' }, expected: expected('2026-01-31', 'attempt due'), observed: { date: '2026-01-31', observed: 'success' } },
    ])
  })

  it('another amount charged: amount_mismatch by the difference, either way', () => {
    const more = checkBilling(monthly({ observations: [ok('2026-01-31', 30000n)] }), dates('2026-01-31'), POLICY)
    expect(more.map((d) => d.comparison)).toEqual([{ _tag: 'Break', class: 'amount_mismatch', amountAtStake: 100n, detail: 'charged 300.00 THB; the plan bills 299.00 THB' }])
    const less = checkBilling(monthly({ observations: [ok('2026-01-31', 29000n)] }), dates('2026-01-31'), POLICY)
    expect(less.map((d) => d.comparison)).toEqual([{ _tag: 'Break', class: 'amount_mismatch', amountAtStake: 900n, detail: 'charged 290.00 THB; the plan bills 299.00 THB' }])
  })

  it('a failed attempt on its due date is matched, whatever amount it carries', () => {
    expect(checkBilling(monthly({ observations: [fail('2026-01-31')] }), dates('2026-01-31'), POLICY)).toEqual([
      { date: '2026-01-31', comparison: { _tag: 'Matched' }, expected: expected('2026-01-31', 'attempt due'), observed: { date: '2026-01-31', observed: 'failure' } },
    ])
  })

  it('missing_charge from the instant the Bangkok day plus the grace has passed; pending one millisecond before', () => {
    // 31 January ends in Bangkok at 2026-01-31T17:00Z; plus one day of grace.
    const edge = new Date('2026-02-01T17:00:00.000Z')
    expect(checkBilling(monthly(), dates('2026-01-31'), { asOf: edge, chargeGraceMs: DAY })).toEqual([
      {
        date: '2026-01-31',
        comparison: { _tag: 'Break', class: 'missing_charge', amountAtStake: 29900n, detail: 'a charge was due on 2026-01-31 and no charge or failure was observed' },
        expected: expected('2026-01-31', 'attempt due'),
        observed: { date: '2026-01-31', observed: 'none' },
      },
    ])
    expect(checkBilling(monthly(), dates('2026-01-31'), { asOf: new Date(edge.getTime() - 1), chargeGraceMs: DAY })).toEqual([
      { date: '2026-01-31', comparison: { _tag: 'Pending', why: 'a charge is due on 2026-01-31; its notification may still come' }, expected: expected('2026-01-31', 'attempt due'), observed: { date: '2026-01-31', observed: 'none yet' } },
    ])
  })

  it('cancelled on the due day itself: neither a charge nor its absence is a break; the day after, nothing is due', () => {
    const item = monthly({ cancelledOn: '2026-02-28', observations: [ok('2026-01-31')] })
    expect(checkBilling(item, dates('2026-01-31', '2026-02-28', '2026-03-31'), POLICY)).toEqual([
      { date: '2026-01-31', comparison: { _tag: 'Matched' }, expected: expected('2026-01-31', 'attempt due'), observed: { date: '2026-01-31', observed: 'success' } },
      { date: '2026-02-28', comparison: { _tag: 'Matched' }, expected: expected('2026-02-28', 'attempt due, cancelled the same day'), observed: { date: '2026-02-28', observed: 'none' } },
    ])
    expect(checkBilling(monthly({ cancelledOn: '2026-02-27', observations: [ok('2026-01-31')] }), dates('2026-02-28'), POLICY)).toEqual([])
  })

  it('an attempt after the cancel, or on no due date: unexpected_charge saying which, a failure at stake 0', () => {
    const item = monthly({ cancelledOn: '2026-02-10', observations: [ok('2026-01-31'), ok('2026-02-28'), fail('2026-02-05')] })
    expect(checkBilling(item, dates('2026-02-05', '2026-02-28'), POLICY)).toEqual([
      {
        date: '2026-02-05',
        comparison: { _tag: 'Break', class: 'unexpected_charge', amountAtStake: 0n, detail: 'a failed attempt was observed on 2026-02-05 on a date no attempt was due (after the last term, or twice for one cycle)' },
        expected: expected('2026-02-05', 'no attempt'),
        observed: { date: '2026-02-05', observed: 'failure' },
      },
      {
        date: '2026-02-28',
        comparison: { _tag: 'Break', class: 'unexpected_charge', amountAtStake: 29900n, detail: 'a charge was observed on 2026-02-28 after the cancel' },
        expected: expected('2026-02-28', 'no attempt'),
        observed: { date: '2026-02-28', observed: 'success' },
      },
    ])
  })

  it('an attempt on the cancel day that was not due is not "after the cancel"', () => {
    const [d] = checkBilling(monthly({ cancelledOn: '2026-02-10', observations: [ok('2026-01-31'), ok('2026-02-10')] }), dates('2026-02-10'), POLICY)
    expect(d?.comparison).toEqual({ _tag: 'Break', class: 'unexpected_charge', amountAtStake: 29900n, detail: 'a charge was observed on 2026-02-10 on a date no attempt was due (after the last term, or twice for one cycle)' })
  })

  it('three failures, then a charge: suspension_mismatch naming the last failure; a charge on that day is a second attempt', () => {
    const item = monthly({ observations: [fail('2026-01-31'), fail('2026-02-01'), fail('2026-02-02'), ok('2026-02-02'), ok('2026-03-31')], suspendedOn: '2026-02-02' })
    expect(checkBilling(item, dates('2026-02-02', '2026-03-31'), POLICY)).toEqual([
      { date: '2026-02-02', comparison: { _tag: 'Break', class: 'unexpected_charge', amountAtStake: 29900n, detail: 'a charge was observed on 2026-02-02 on a date no attempt was due (after the last term, or twice for one cycle)' }, expected: expected('2026-02-02', 'no attempt'), observed: { date: '2026-02-02', observed: 'success' } },
      {
        date: '2026-03-31',
        comparison: { _tag: 'Break', class: 'suspension_mismatch', amountAtStake: 29900n, detail: 'charged on 2026-03-31 after three consecutive failures (the last on 2026-02-02) should have suspended it' },
        expected: expected('2026-03-31', 'suspended'),
        observed: { date: '2026-03-31', observed: 'success' },
      },
    ])
  })

  it('a failed attempt after the suspension is unexpected, not a suspension mismatch', () => {
    const item = monthly({ observations: [fail('2026-01-31'), fail('2026-02-01'), fail('2026-02-02'), fail('2026-03-31')], suspendedOn: '2026-02-02' })
    expect(checkBilling(item, dates('2026-03-31'), POLICY).map((d) => d.comparison)).toMatchObject([{ _tag: 'Break', class: 'unexpected_charge', amountAtStake: 0n }])
  })

  it('SUSPEND without three failures: suspension_mismatch on the suspension date, the most serious finding of that date', () => {
    const item = monthly({ observations: [ok('2026-01-31'), fail('2026-02-28')], suspendedOn: '2026-02-28' })
    expect(checkBilling(item, dates('2026-02-28'), POLICY)).toEqual([
      {
        date: '2026-02-28',
        comparison: { _tag: 'Break', class: 'suspension_mismatch', amountAtStake: 0n, detail: 'suspended on 2026-02-28 without three consecutive failed charges' },
        expected: expected('2026-02-28', 'active'),
        observed: { date: '2026-02-28', observed: 'suspended' },
      },
    ])
  })

  it('a less serious finding never replaces a more serious one of the same date, nor an equal one', () => {
    // 2026-02-28: a due charge with another amount (amount_mismatch, 3) and a second one (unexpected_charge, 5).
    const item = monthly({ observations: [ok('2026-01-31'), ok('2026-02-28', 100n), ok('2026-02-28')] })
    expect(checkBilling(item, dates('2026-02-28'), POLICY).map((d) => d.comparison)).toMatchObject([{ _tag: 'Break', class: 'unexpected_charge' }])
    // Two unexpected attempts on one day: the first is kept.
    const twice = monthly({ observations: [ok('2026-01-31'), ok('2026-02-10', 100n), fail('2026-02-10')] })
    expect(checkBilling(twice, dates('2026-02-10'), POLICY).map((d) => d.comparison)).toMatchObject([{ _tag: 'Break', class: 'unexpected_charge', amountAtStake: 100n }])
    // A pending due date beside nothing else stays pending (rank 1 over nothing).
    expect(checkBilling(monthly({ observations: [ok('2026-01-31')] }), dates('2026-02-28'), { asOf: new Date('2026-02-28T20:00:00+07:00'), chargeGraceMs: DAY }).map((d) => d.comparison._tag)).toEqual(['Pending'])
  })

  it('only the dates asked for, in date order, whatever order they were found in', () => {
    const item = monthly({ observations: [ok('2026-03-31'), ok('2026-01-31'), ok('2026-02-28'), ok('2026-01-05')] })
    expect(checkBilling(item, dates('2026-03-31', '2026-01-05', '2026-02-28'), POLICY).map((d) => d.date)).toEqual(['2026-01-05', '2026-02-28', '2026-03-31'])
    expect(checkBilling(item, dates(), POLICY)).toEqual([])
  })

  it('due dates are checked up to the latest date asked for or observed, not beyond', () => {
    // Asked only about 2026-01-31, with an observation on 2026-02-28: 2026-03-31 is past the horizon.
    const item = monthly({ observations: [ok('2026-01-31'), ok('2026-02-28')] })
    expect(checkBilling(item, dates('2026-01-31', '2026-02-28', '2026-03-31'), { asOf: POLICY.asOf, chargeGraceMs: DAY }).map((d) => [d.date, d.comparison._tag])).toEqual([
      ['2026-01-31', 'Matched'],
      ['2026-02-28', 'Matched'],
      ['2026-03-31', 'Break'],
    ])
    expect(checkBilling(item, dates('2026-01-31'), POLICY).map((d) => d.date)).toEqual(['2026-01-31'])
  })

  it('no plan to compute with: nothing is due, and every attempt is unexpected', () => {
    expect(checkBilling(monthly({ plan: null, observations: [ok('2026-01-31')] }), dates('2026-01-31'), POLICY).map((d) => d.comparison)).toMatchObject([{ _tag: 'Break', class: 'unexpected_charge' }])
  })

  it('retry = N: a failed term is not retried the next day', () => {
    const item = monthly({ plan: { startDate: { year: 2026, month: 1, day: 31 }, intervalType: 'MONTHLY', interval: 1, totalTerms: 3, retry: 'N' }, observations: [fail('2026-01-31'), ok('2026-02-28')] })
    expect(checkBilling(item, dates('2026-01-31', '2026-02-01', '2026-02-28'), POLICY).map((d) => [d.date, d.comparison._tag])).toEqual([
      ['2026-01-31', 'Matched'],
      ['2026-02-28', 'Matched'],
    ])
  })
})

describe('subscriptionItemOf', () => {
  const charged = (billingDate: string, amount = 29900n): SubscriptionEvent =>
    subscriptionCharged.make({ recurringBillId: sub.BILL_ID, observationKey: `c-${billingDate}`, notificationType: 'Deducted', billingDate, amount: sat(amount), currency: 'THB', amountReported: true, observedAt: at(60) })
  const failed = (billingDate: string): SubscriptionEvent =>
    subscriptionChargeFailed.make({ recurringBillId: sub.BILL_ID, observationKey: `f-${billingDate}`, notificationType: 'Deducted', billingDate, observedAt: at(60) })

  it('none before the subscription exists', () => {
    expect(subscriptionItemOf(STREAM, [])).toBeNull()
  })

  it('a created subscription not yet authorised: the whole item, not activated', () => {
    const events = [sub.aSubscriptionRequested(), sub.aSubscriptionCreated()]
    expect(subscriptionItemOf(STREAM, events)).toEqual({
      kind: 'subscription',
      merchantId: MERCHANT_ID,
      merchantSubscribeId: sub.SUBSCRIBE_ID,
      stream: STREAM,
      plan: { startDate: { year: 2026, month: 1, day: 15 }, intervalType: 'MONTHLY', interval: 1, totalTerms: 12, retry: 'Y' },
      billingAmount: 29900n,
      currency: 'THB',
      activated: false,
      cancelledOn: null,
      suspendedOn: null,
      observations: [],
    })
  })

  it('charges and failures in order; the suspension is dated by the last failure; the cancel by its Bangkok date', () => {
    const events = [
      ...sub.anActiveSubscription(),
      charged('2026-01-15'),
      failed('2026-02-15'),
      failed('2026-02-16'),
      failed('2026-02-17'),
      subscriptionSuspended.make({ recurringBillId: sub.BILL_ID, observationKey: 's', consecutiveFailures: 3, reason: 'consecutive_failed_charges', suspendedAt: at(60 * 24 * 50) }),
      subscriptionCancelled.make({ requestSeq: 2, traceId: null, cancelledAt: new Date('2026-03-01T17:30:00Z') }),
    ]
    expect(subscriptionItemOf(STREAM, events)).toMatchObject({
      activated: true,
      suspendedOn: '2026-02-17',
      cancelledOn: '2026-03-02',
      observations: [
        { date: '2026-01-15', outcome: 'success', amount: 29900n },
        { date: '2026-02-15', outcome: 'failure', amount: 0n },
        { date: '2026-02-16', outcome: 'failure', amount: 0n },
        { date: '2026-02-17', outcome: 'failure', amount: 0n },
      ],
    })
  })

  it('a suspension with no failure observed is dated by its own Bangkok date', () => {
    const events = [...sub.anActiveSubscription(), subscriptionSuspended.make({ recurringBillId: sub.BILL_ID, observationKey: 's', consecutiveFailures: 3, reason: 'consecutive_failed_charges', suspendedAt: new Date('2026-02-20T18:00:00Z') })]
    expect(subscriptionItemOf(STREAM, events)?.suspendedOn).toBe('2026-02-21')
  })

  it('an update restarts billing: earlier attempts and suspension belong to the old plan', () => {
    const update = sub.anUpdateRequest()
    const events = [
      ...sub.anActiveSubscription(),
      charged('2026-01-15'),
      failed('2026-02-15'),
      subscriptionSuspended.make({ recurringBillId: sub.BILL_ID, observationKey: 's', consecutiveFailures: 3, reason: 'consecutive_failed_charges', suspendedAt: at(60 * 24 * 50) }),
      subscriptionUpdated.make({ requestSeq: 2, recurringBillId: sub.BILL_ID, gatewayStatus: 'ACTIVE', linkUrl: null, traceId: 't', plan: sub.planOf(update), response: redactPayerData({}), receivedAt: at(60 * 24 * 60) }),
      charged('2026-03-15', 34900n),
    ]
    expect(subscriptionItemOf(STREAM, events)).toMatchObject({ billingAmount: 34900n, suspendedOn: null, observations: [{ date: '2026-03-15', outcome: 'success', amount: 34900n }] })
  })
})

describe('checkBilling: cycles that meet on one date, and dates nothing was observed on', () => {
  const daily = (o: Partial<SubscriptionItem> = {}): SubscriptionItem =>
    monthly({ plan: { startDate: { year: 2026, month: 1, day: 1 }, intervalType: 'DAILY', interval: 1, totalTerms: 3, retry: 'Y' }, ...o })

  it('a retry charged on the day the next cycle is due: that cycle is still due there (pending wins over matched)', () => {
    const item = daily({ observations: [fail('2026-01-01'), ok('2026-01-02')] })
    const asOf = new Date('2026-01-02T20:00:00+07:00')
    expect(checkBilling(item, dates('2026-01-02'), { asOf, chargeGraceMs: DAY }).map((d) => d.comparison)).toEqual([{ _tag: 'Pending', why: 'a charge is due on 2026-01-02; its notification may still come' }])
    expect(checkBilling(item, dates('2026-01-02'), POLICY).map((d) => d.comparison)).toMatchObject([{ _tag: 'Break', class: 'missing_charge' }])
  })

  it('a due date nothing was observed on is not taken as a failure: no retry is due the next day', () => {
    expect(checkBilling(monthly(), dates('2026-01-31', '2026-02-01'), POLICY).map((d) => [d.date, d.comparison._tag === 'Break' ? d.comparison.class : d.comparison._tag])).toEqual([['2026-01-31', 'missing_charge']])
  })

  it('a due date before the cancel day with nothing observed is missing, not excused by the cancel', () => {
    expect(checkBilling(monthly({ cancelledOn: '2026-02-28' }), dates('2026-01-31', '2026-02-28'), POLICY).map((d) => [d.date, d.comparison._tag === 'Break' ? d.comparison.class : d.comparison._tag])).toEqual([
      ['2026-01-31', 'missing_charge'],
      ['2026-02-28', 'Matched'],
    ])
  })
})

describe('subscriptionItemOf: the suspension date', () => {
  it('is the last failure, not a later charge', () => {
    const failedOn = (billingDate: string): SubscriptionEvent =>
      subscriptionChargeFailed.make({ recurringBillId: sub.BILL_ID, observationKey: `f-${billingDate}`, notificationType: 'Deducted', billingDate, observedAt: at(60) })
    const chargedOn = (billingDate: string): SubscriptionEvent =>
      subscriptionCharged.make({ recurringBillId: sub.BILL_ID, observationKey: `c-${billingDate}`, notificationType: 'Deducted', billingDate, amount: sat(29900n), currency: 'THB', amountReported: true, observedAt: at(60) })
    const events = [
      ...sub.anActiveSubscription(),
      failedOn('2026-02-15'),
      chargedOn('2026-02-16'),
      subscriptionSuspended.make({ recurringBillId: sub.BILL_ID, observationKey: 's', consecutiveFailures: 3, reason: 'consecutive_failed_charges', suspendedAt: at(60 * 24 * 50) }),
    ]
    expect(subscriptionItemOf(STREAM, events)?.suspendedOn).toBe('2026-02-15')
  })
})
