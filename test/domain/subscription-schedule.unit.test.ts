import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { formatCalendarDate, parseCalendarDate, type CalendarDate } from '../../src/domain/bangkok-time.ts'
import {
  addDays,
  addMonths,
  afterCancel,
  afterCharge,
  billingDate,
  billingDates,
  compareDates,
  daysInMonth,
  initialChargeState,
  isChargeDue,
  isValidCalendarDate,
  nextBillingDate,
  type BillingPlan,
  type BillingPlanWithRetry,
  type ChargeState,
  type IntervalType,
} from '../../src/domain/subscription-schedule.ts'

const date = (text: string): CalendarDate => {
  const parsed = parseCalendarDate(text)
  if (E.isLeft(parsed)) throw new Error(`test date ${text}: ${parsed.left.join(', ')}`)
  return parsed.right
}
const texts = (dates: ReadonlyArray<CalendarDate>): string[] => dates.map(formatCalendarDate)

const aPlan = (overrides: Partial<BillingPlanWithRetry> & { start?: string } = {}): BillingPlanWithRetry => ({
  startDate: date(overrides.start ?? '2026-01-15'),
  intervalType: 'MONTHLY',
  interval: 1,
  totalTerms: 4,
  retry: 'Y',
  ...overrides,
})

describe('billing dates: the month-end rule (Subscription, start_date)', () => {
  it('monthly from 31 January: 28 February, then back to the 31st, then 30 April', () => {
    expect(texts(billingDates(aPlan({ start: '2026-01-31' })))).toEqual(['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30'])
  })
  it('monthly from 31 January of a leap year: 29 February', () => {
    expect(texts(billingDates(aPlan({ start: '2028-01-31', totalTerms: 3 })))).toEqual(['2028-01-31', '2028-02-29', '2028-03-31'])
  })
  it('monthly from the 30th and the 29th clamp in February only', () => {
    expect(texts(billingDates(aPlan({ start: '2026-01-30', totalTerms: 3 })))).toEqual(['2026-01-30', '2026-02-28', '2026-03-30'])
    expect(texts(billingDates(aPlan({ start: '2026-01-29', totalTerms: 3 })))).toEqual(['2026-01-29', '2026-02-28', '2026-03-29'])
  })
  it('every 2 months from 31 December crosses the year and clamps in February and April', () => {
    expect(texts(billingDates(aPlan({ start: '2025-12-31', interval: 2, totalTerms: 4 })))).toEqual(['2025-12-31', '2026-02-28', '2026-04-30', '2026-06-30'])
  })
  it('yearly from 29 February: 28 February in common years, 29 February in the next leap year', () => {
    const dates = texts(billingDates(aPlan({ start: '2028-02-29', intervalType: 'YEARLY', totalTerms: 5 })))
    expect(dates).toEqual(['2028-02-29', '2029-02-28', '2030-02-28', '2031-02-28', '2032-02-29'])
  })
})

describe('billing dates: days and weeks', () => {
  it('daily every 7 days across a month end', () => {
    expect(texts(billingDates(aPlan({ start: '2026-02-20', intervalType: 'DAILY', interval: 7, totalTerms: 3 })))).toEqual(['2026-02-20', '2026-02-27', '2026-03-06'])
  })
  it('daily every 365 days, through a leap day', () => {
    expect(texts(billingDates(aPlan({ start: '2027-03-01', intervalType: 'DAILY', interval: 365, totalTerms: 2 })))).toEqual(['2027-03-01', '2028-02-29'])
  })
  it('weekly and every 4 weeks across a year end', () => {
    expect(texts(billingDates(aPlan({ start: '2026-12-24', intervalType: 'WEEKLY', totalTerms: 3 })))).toEqual(['2026-12-24', '2026-12-31', '2027-01-07'])
    expect(texts(billingDates(aPlan({ start: '2026-12-24', intervalType: 'WEEKLY', interval: 4, totalTerms: 2 })))).toEqual(['2026-12-24', '2027-01-21'])
  })
  it('gives exactly totalTerms dates, and nextBillingDate is null after the last', () => {
    const plan = aPlan({ totalTerms: 12 })
    expect(billingDates(plan)).toHaveLength(12)
    expect(nextBillingDate(plan, 11)).toEqual(date('2026-12-15'))
    expect(nextBillingDate(plan, 12)).toBeNull()
  })
  it('rejects a plan that no codec would let through, with the reason', () => {
    expect(() => billingDates(aPlan({ interval: 0 }))).toThrow('interval must be a whole number of at least 1, got 0')
    expect(() => billingDates({ ...aPlan(), startDate: { year: 2026, month: 2, day: 30 } })).toThrow('startDate is not a calendar date')
  })
})

describe('calendar helpers', () => {
  it('addDays crosses months, years and leap days, both ways', () => {
    expect(formatCalendarDate(addDays(date('2028-02-28'), 1))).toBe('2028-02-29')
    expect(formatCalendarDate(addDays(date('2026-12-31'), 1))).toBe('2027-01-01')
    expect(formatCalendarDate(addDays(date('2026-03-01'), -1))).toBe('2026-02-28')
    expect(formatCalendarDate(addDays(date('1900-02-28'), 1))).toBe('1900-03-01')
  })
  it('compareDates orders by calendar', () => {
    expect(compareDates(date('2026-01-31'), date('2026-02-01'))).toBeLessThan(0)
    expect(compareDates(date('2026-02-01'), date('2026-02-01'))).toBe(0)
    expect(compareDates(date('2027-01-01'), date('2026-12-31'))).toBeGreaterThan(0)
  })
})

const calendarDate = fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2400-12-31T00:00:00Z'), noInvalidDate: true }).map(
  (d): CalendarDate => ({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }),
)
const intervalType = fc.constantFrom<IntervalType>('DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY')
// Limits 3 and 4: interval by interval_type, total_terms at least 2 (a few hundred keeps runs fast).
const plan: fc.Arbitrary<BillingPlan> = fc
  .record({ startDate: calendarDate, intervalType, totalTerms: fc.integer({ min: 2, max: 60 }), raw: fc.integer({ min: 1, max: 365 }) })
  .map(({ raw, ...p }) => ({
    ...p,
    interval: p.intervalType === 'DAILY' ? Math.max(7, raw) : p.intervalType === 'WEEKLY' ? 1 + (raw % 4) : p.intervalType === 'MONTHLY' ? 1 + (raw % 12) : 1,
  }))

describe('billing dates: properties', () => {
  it('exactly totalTerms dates, every one a valid calendar date, strictly increasing', () => {
    fc.assert(
      fc.property(plan, (p) => {
        const dates = billingDates(p)
        expect(dates).toHaveLength(p.totalTerms)
        for (const d of dates) expect(isValidCalendarDate(d)).toBe(true)
        dates.slice(1).forEach((d, i) => expect(compareDates(dates[i] ?? d, d)).toBeLessThan(0))
      }),
    )
  })
  it('monthly and yearly: the day is min(start day, days in that month), and the month steps by interval', () => {
    fc.assert(
      fc.property(
        plan.filter((p) => p.intervalType === 'MONTHLY' || p.intervalType === 'YEARLY'),
        (p) => {
          const months = p.intervalType === 'MONTHLY' ? p.interval : 12
          billingDates(p).forEach((d, k) => {
            expect(d.day).toBe(Math.min(p.startDate.day, daysInMonth(d.year, d.month)))
            expect(d.year * 12 + d.month - (p.startDate.year * 12 + p.startDate.month)).toBe(k * months)
          })
        },
      ),
    )
  })
  it('daily and weekly: consecutive dates are exactly interval days or weeks apart', () => {
    fc.assert(
      fc.property(
        plan.filter((p) => p.intervalType === 'DAILY' || p.intervalType === 'WEEKLY'),
        (p) => {
          const step = p.intervalType === 'DAILY' ? p.interval : 7 * p.interval
          const dates = billingDates(p)
          dates.slice(1).forEach((d, i) => expect(formatCalendarDate(addDays(dates[i] ?? d, step))).toBe(formatCalendarDate(d)))
        },
      ),
    )
  })
  it('addDays agrees with formatCalendarDate/parse round trips through JavaScript dates', () => {
    fc.assert(
      fc.property(calendarDate, fc.integer({ min: -1000, max: 1000 }), (d, n) => {
        const viaDate = new Date(Date.UTC(d.year, d.month - 1, d.day + n))
        expect(addDays(d, n)).toEqual({ year: viaDate.getUTCFullYear(), month: viaDate.getUTCMonth() + 1, day: viaDate.getUTCDate() })
      }),
    )
  })
})

/** Runs outcomes against a plan, each attempt on the state's nextAttempt, and returns every state. */
const run = (p: BillingPlanWithRetry, outcomes: ReadonlyArray<'success' | 'failure'>): ChargeState[] => {
  const states: ChargeState[] = [initialChargeState(p)]
  for (const outcome of outcomes) {
    const s = states[states.length - 1]
    if (s === undefined || s.nextAttempt === null) throw new Error(`no attempt is due: ${JSON.stringify(s)}`)
    states.push(afterCharge(p, s, outcome, s.nextAttempt))
  }
  return states
}
const attempts = (states: ReadonlyArray<ChargeState>): Array<string | null> => states.map((s) => (s.nextAttempt === null ? null : formatCalendarDate(s.nextAttempt)))

describe('charge outcomes, retry = Y (Limits 5)', () => {
  const p = aPlan({ start: '2026-01-31', retry: 'Y' })

  it('starts ACTIVE with the first billing date due', () => {
    expect(initialChargeState(p)).toEqual({ termsCharged: 0, consecutiveFailures: 0, status: 'ACTIVE', nextAttempt: date('2026-01-31'), termsSkipped: 0 })
  })
  it('fail, fail, fail: retried on each following day, then SUSPEND with no fourth attempt', () => {
    const states = run(p, ['failure', 'failure', 'failure'])
    expect(attempts(states)).toEqual(['2026-01-31', '2026-02-01', '2026-02-02', null])
    expect(states[3]).toMatchObject({ status: 'SUSPEND', consecutiveFailures: 3, termsCharged: 0, nextAttempt: null })
    expect(() => run(p, ['failure', 'failure', 'failure', 'failure'])).toThrow('no attempt is due')
  })
  it('an outcome reported after SUSPEND changes nothing', () => {
    const suspended = run(p, ['failure', 'failure', 'failure'])[3]
    if (suspended === undefined) throw new Error('no state')
    expect(afterCharge(p, suspended, 'success', date('2026-02-03'))).toBe(suspended)
  })
  it('fail then success: the failure count resets and the next attempt is the next regular date', () => {
    const states = run(p, ['failure', 'success'])
    expect(states[2]).toEqual({ termsCharged: 1, consecutiveFailures: 0, status: 'ACTIVE', nextAttempt: date('2026-02-28'), termsSkipped: 0 })
  })
  it('two failures in one term and two in the next never suspend: only consecutive failures count', () => {
    const states = run(p, ['failure', 'failure', 'success', 'failure', 'failure', 'success'])
    expect(attempts(states)).toEqual(['2026-01-31', '2026-02-01', '2026-02-02', '2026-02-28', '2026-03-01', '2026-03-02', '2026-03-31'])
    expect(states[6]).toMatchObject({ status: 'ACTIVE', termsCharged: 2, consecutiveFailures: 0 })
  })
  it('all terms charged: COMPLETED with no next attempt', () => {
    const states = run(p, ['success', 'success', 'success', 'success'])
    expect(attempts(states)).toEqual(['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', null])
    expect(states[4]).toMatchObject({ status: 'COMPLETED', termsCharged: 4 })
  })
})

describe('charge outcomes, retry = N (our reading: a failed term is skipped)', () => {
  const p = aPlan({ start: '2026-01-31', retry: 'N' })

  it('a failure is not retried the next day: the term is skipped and billing goes on at the next regular date', () => {
    const states = run(p, ['failure', 'success'])
    expect(states[1]).toEqual({ termsCharged: 0, consecutiveFailures: 1, status: 'ACTIVE', nextAttempt: date('2026-02-28'), termsSkipped: 1 })
    expect(states[2]).toEqual({ termsCharged: 1, consecutiveFailures: 0, status: 'ACTIVE', nextAttempt: date('2026-03-31'), termsSkipped: 1 })
  })
  it('three consecutive failed terms suspend', () => {
    const states = run(p, ['failure', 'failure', 'failure'])
    expect(attempts(states)).toEqual(['2026-01-31', '2026-02-28', '2026-03-31', null])
    expect(states[3]).toMatchObject({ status: 'SUSPEND', termsSkipped: 2, consecutiveFailures: 3 })
  })
  it('a skipped last term completes the subscription', () => {
    const states = run(p, ['success', 'success', 'success', 'failure'])
    expect(states[4]).toMatchObject({ status: 'COMPLETED', termsCharged: 3, termsSkipped: 1, nextAttempt: null })
  })
})

describe('cancel and due checks', () => {
  const p = aPlan({ start: '2026-01-31' })
  it('cancel stops billing; a completed subscription stays completed', () => {
    expect(afterCancel(initialChargeState(p))).toMatchObject({ status: 'CANCELLED', nextAttempt: null })
    const done = run(p, ['success', 'success', 'success', 'success'])[4]
    if (done === undefined) throw new Error('no state')
    expect(afterCancel(done)).toBe(done)
  })
  it('a charge is due on its date and after it (a clock jump), not before', () => {
    const s = initialChargeState(p)
    expect(isChargeDue(s, date('2026-01-30'))).toBe(false)
    expect(isChargeDue(s, date('2026-01-31'))).toBe(true)
    expect(isChargeDue(s, date('2026-03-01'))).toBe(true)
    expect(isChargeDue(afterCancel(s), date('2026-03-01'))).toBe(false)
  })
})

describe('inputs no codec lets through are refused, each naming its rule', () => {
  const bad = { year: 2026, month: 2, day: 30 }
  it('daysInMonth: months 1 to 12, whole', () => {
    expect(() => daysInMonth(2026, 0)).toThrow(new RangeError('month must be 1 to 12, got 0'))
    expect(() => daysInMonth(2026, 13)).toThrow(new RangeError('month must be 1 to 12, got 13'))
    expect(() => daysInMonth(2026, 1.5)).toThrow(new RangeError('month must be 1 to 12, got 1.5'))
    expect([daysInMonth(2026, 1), daysInMonth(2026, 12), daysInMonth(2028, 2)]).toEqual([31, 31, 29])
  })
  it('isValidCalendarDate: each part checked on its own', () => {
    expect(isValidCalendarDate({ year: 2026, month: 1, day: 1 })).toBe(true)
    expect(isValidCalendarDate({ year: 2026, month: 12, day: 31 })).toBe(true)
    for (const d of [
      { year: 2026.5, month: 1, day: 1 },
      { year: 2026, month: 1.5, day: 1 },
      { year: 2026, month: 1, day: 1.5 },
      { year: 2026, month: 0, day: 1 },
      { year: 2026, month: 13, day: 1 },
      { year: 2026, month: 1, day: 0 },
      { year: 2026, month: 1, day: 32 },
      bad,
    ]) {
      expect([d, isValidCalendarDate(d)]).toEqual([d, false])
    }
  })
  it('addDays and addMonths: a calendar date and a whole number', () => {
    expect(() => addDays(bad, 1)).toThrow(new RangeError(`addDays: date is not a calendar date: ${JSON.stringify(bad)}`))
    expect(() => addDays(date('2026-01-01'), 0.5)).toThrow(new RangeError('addDays: n must be a whole number of days, got 0.5'))
    expect(() => addMonths(bad, 1)).toThrow(new RangeError(`addMonths: date is not a calendar date: ${JSON.stringify(bad)}`))
    expect(() => addMonths(date('2026-01-01'), 0.5)).toThrow(new RangeError('addMonths: n must be a whole number of months, got 0.5'))
  })
  it('a plan: totalTerms whole and at least 0; a cycle whole and at least 0', () => {
    expect(() => billingDates(aPlan({ totalTerms: -1 }))).toThrow(new RangeError('billing plan: totalTerms must be a whole number of at least 0, got -1'))
    expect(() => billingDates(aPlan({ totalTerms: 1.5 }))).toThrow(new RangeError('billing plan: totalTerms must be a whole number of at least 0, got 1.5'))
    expect(() => billingDates(aPlan({ interval: 1.5 }))).toThrow(new RangeError('billing plan: interval must be a whole number of at least 1, got 1.5'))
    expect(billingDates(aPlan({ totalTerms: 0 }))).toEqual([])
    expect(() => billingDate(aPlan(), -1)).toThrow(new RangeError('billing cycle must be a whole number of at least 0, got -1'))
    expect(() => billingDate(aPlan(), 0.5)).toThrow(new RangeError('billing cycle must be a whole number of at least 0, got 0.5'))
    expect(() => billingDate({ ...aPlan(), totalTerms: -1 }, 0)).toThrow('totalTerms')
    expect(() => nextBillingDate({ ...aPlan(), interval: 0 }, 0)).toThrow('interval')
    // Even past the last term, where no date is computed.
    expect(() => nextBillingDate({ ...aPlan(), interval: 0 }, 99)).toThrow('interval')
    expect(() => initialChargeState({ ...aPlan(), interval: 0 })).toThrow('interval')
    expect(() => afterCharge(aPlan(), initialChargeState(aPlan()), 'success', bad)).toThrow(new RangeError(`afterCharge: attemptDate is not a calendar date: ${JSON.stringify(bad)}`))
  })
  it('a plan of no terms starts COMPLETED, with nothing due', () => {
    const s = initialChargeState(aPlan({ totalTerms: 0 }))
    expect(s).toEqual({ termsCharged: 0, consecutiveFailures: 0, status: 'COMPLETED', nextAttempt: null, termsSkipped: 0 })
    expect(isChargeDue(s, date('2030-01-01'))).toBe(false)
  })
  it('cancel keeps a cancelled state as it is; an ACTIVE state with no next attempt is not due', () => {
    const cancelled = afterCancel(initialChargeState(aPlan()))
    expect(afterCancel(cancelled)).toBe(cancelled)
    const suspended: ChargeState = { termsCharged: 0, consecutiveFailures: 3, status: 'SUSPEND', nextAttempt: date('2026-01-15') }
    expect(isChargeDue(suspended, date('2026-02-01'))).toBe(false)
    expect(isChargeDue({ termsCharged: 0, consecutiveFailures: 0, status: 'ACTIVE', nextAttempt: null }, date('2026-02-01'))).toBe(false)
    expect(afterCancel(suspended)).toEqual({ ...suspended, status: 'CANCELLED', nextAttempt: null })
  })
  it('far dates: day numbers of every 400-year cycle come back as the same date', () => {
    for (const text of ['0001-01-01', '0400-02-29', '1600-12-31', '2000-03-01', '2100-02-28', '2399-12-31', '9999-12-31']) {
      const d = date(text)
      expect(formatCalendarDate(addDays(addDays(d, 146097), -146097))).toBe(text)
      expect(formatCalendarDate(addDays(d, 0))).toBe(text)
    }
    expect(formatCalendarDate(addDays(date('2000-02-28'), 1))).toBe('2000-02-29')
    expect(formatCalendarDate(addDays(date('2100-02-28'), 1))).toBe('2100-03-01')
    expect(formatCalendarDate(addDays(date('1999-12-31'), 366))).toBe('2000-12-31')
  })
})
