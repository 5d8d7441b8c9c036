import { describe, expect, it } from 'vitest'
import { checkBilling, subscriptionItemOf, type ChargeObservation, type SubscriptionItem } from '../../../src/domain/reconciliation/subscription-billing.ts'
import * as sub from '../subscription/builders.ts'
import { MERCHANT_ID, sat } from '../support/values.ts'

const GRACE = 86_400_000
/** As of 2026-06-01 (Bangkok): every date before the end of May is past its grace. */
const POLICY = { asOf: new Date('2026-06-01T12:00:00+07:00'), chargeGraceMs: GRACE }

const monthly = (o: Partial<SubscriptionItem> = {}): SubscriptionItem => ({
  kind: 'subscription',
  merchantId: MERCHANT_ID,
  merchantSubscribeId: 'SUB-1',
  stream: `subscription-${MERCHANT_ID}-SUB-1`,
  plan: { startDate: { year: 2026, month: 1, day: 31 }, intervalType: 'MONTHLY', interval: 1, totalTerms: 3, retry: 'Y' },
  billingAmount: sat(29900n),
  currency: 'THB',
  activated: true,
  cancelledOn: null,
  suspendedOn: null,
  observations: [],
  ...o,
})
const ok = (date: string): ChargeObservation => ({ date, outcome: 'success', amount: 29900n })
const fail = (date: string): ChargeObservation => ({ date, outcome: 'failure', amount: 0n })
const dates = (...ds: ReadonlyArray<string>): ReadonlySet<string> => new Set(ds)
const verdicts = (item: SubscriptionItem, ds: ReadonlySet<string>, policy = POLICY) =>
  checkBilling(item, ds, policy).map((d) => ({ date: d.date, verdict: d.comparison._tag === 'Break' ? d.comparison.class : d.comparison._tag }))

const ALL = dates('2026-01-31', '2026-02-01', '2026-02-28', '2026-03-01', '2026-03-31', '2026-04-30', '2026-05-01')

describe('subscription billing: what the plan makes due against what was observed', () => {
  it('given every charge observed on its date (month-end rule: 31 Jan, 28 Feb, 31 Mar), then each date is matched', () => {
    expect(verdicts(monthly({ observations: [ok('2026-01-31'), ok('2026-02-28'), ok('2026-03-31')] }), ALL)).toEqual([
      { date: '2026-01-31', verdict: 'Matched' },
      { date: '2026-02-28', verdict: 'Matched' },
      { date: '2026-03-31', verdict: 'Matched' },
    ])
  })
  it('missing_charge: a due date past its grace with nothing observed', () => {
    expect(verdicts(monthly({ observations: [ok('2026-01-31'), ok('2026-03-31')] }), ALL)).toContainEqual({ date: '2026-02-28', verdict: 'missing_charge' })
  })
  it('pending: a due date still within its grace', () => {
    expect(verdicts(monthly({ observations: [ok('2026-01-31')] }), dates('2026-02-28'), { ...POLICY, asOf: new Date('2026-02-28T20:00:00+07:00') })).toEqual([{ date: '2026-02-28', verdict: 'Pending' }])
  })
  it('unexpected_charge: after the last term', () => {
    expect(verdicts(monthly({ observations: [ok('2026-01-31'), ok('2026-02-28'), ok('2026-03-31'), ok('2026-04-30')] }), ALL)).toContainEqual({ date: '2026-04-30', verdict: 'unexpected_charge' })
  })
  it('unexpected_charge: after the cancel', () => {
    expect(verdicts(monthly({ cancelledOn: '2026-02-10', observations: [ok('2026-01-31'), ok('2026-02-28')] }), ALL)).toEqual([
      { date: '2026-01-31', verdict: 'Matched' },
      { date: '2026-02-28', verdict: 'unexpected_charge' },
    ])
  })
  it('unexpected_charge: twice for one cycle', () => {
    expect(verdicts(monthly({ observations: [ok('2026-01-31'), ok('2026-02-01')] }), dates('2026-01-31', '2026-02-01'))).toEqual([
      { date: '2026-01-31', verdict: 'Matched' },
      { date: '2026-02-01', verdict: 'unexpected_charge' },
    ])
  })
  it('retry = Y: a failure is retried the next day; three consecutive failures suspend (no further charge is due)', () => {
    const item = monthly({ observations: [fail('2026-01-31'), fail('2026-02-01'), fail('2026-02-02')], suspendedOn: '2026-02-02' })
    expect(verdicts(item, dates('2026-01-31', '2026-02-01', '2026-02-02', '2026-02-28'))).toEqual([
      { date: '2026-01-31', verdict: 'Matched' },
      { date: '2026-02-01', verdict: 'Matched' },
      { date: '2026-02-02', verdict: 'Matched' },
    ])
  })
  it('suspension_mismatch: three failures and still charging', () => {
    const item = monthly({ observations: [fail('2026-01-31'), fail('2026-02-01'), fail('2026-02-02'), ok('2026-02-28')], suspendedOn: '2026-02-02' })
    expect(verdicts(item, dates('2026-02-28'))).toEqual([{ date: '2026-02-28', verdict: 'suspension_mismatch' }])
  })
  it('suspension_mismatch: SUSPEND without three consecutive failures', () => {
    const item = monthly({ observations: [ok('2026-01-31'), fail('2026-02-28')], suspendedOn: '2026-02-28' })
    expect(verdicts(item, dates('2026-02-28'))).toEqual([{ date: '2026-02-28', verdict: 'suspension_mismatch' }])
  })
  it('nothing is due before the payer authorised; an observed charge then is unexpected', () => {
    expect(verdicts(monthly({ activated: false }), ALL)).toEqual([])
    expect(verdicts(monthly({ activated: false, observations: [ok('2026-01-31')] }), ALL)).toEqual([{ date: '2026-01-31', verdict: 'unexpected_charge' }])
  })
  it('the item of a stream: the plan in force, its charges, its cancel', () => {
    const active = sub.anActiveSubscription()
    const events = sub.run(active, sub.subscriptionNotified(sub.aSubscriptionNotification({ billing_date: '2026-01-15' })))
    const item = subscriptionItemOf(`subscription-${MERCHANT_ID}-SUB-1`, events)
    expect(item).toMatchObject({ activated: true, billingAmount: 29900n, observations: [{ date: '2026-01-15', outcome: 'success', amount: 29900n }], cancelledOn: null })
    expect(item === null ? [] : verdicts(item, dates('2026-01-15', '2026-02-15'))).toEqual([
      { date: '2026-01-15', verdict: 'Matched' },
      { date: '2026-02-15', verdict: 'missing_charge' },
    ])
  })
})
