import { daysInMonth as calendarDaysInMonth, type CalendarDate } from './bangkok-time.ts'
import type { IntervalType } from './gateway/subscription.ts'

export type { IntervalType }

/**
 * When a subscription charges, and what a charge outcome does to it. Pure: the date of an attempt
 * arrives as an argument, never from a clock.
 */
export type BillingPlan = {
  readonly startDate: CalendarDate
  readonly intervalType: IntervalType
  readonly interval: number
  readonly totalTerms: number
}

/** `retry` (Enumerations, Limits 5). */
export type RetryPolicy = 'Y' | 'N'
export type BillingPlanWithRetry = BillingPlan & { readonly retry: RetryPolicy }

// ---- calendar arithmetic (proleptic Gregorian, exact for every year; no Date, no time zone) ----

export const daysInMonth = (year: number, month: number): number => {
  if (!Number.isInteger(month) || month < 1 || month > 12) throw new RangeError(`month must be 1 to 12, got ${String(month)}`)
  return calendarDaysInMonth(year, month)
}

export const isValidCalendarDate = (d: CalendarDate): boolean =>
  Number.isInteger(d.year) && Number.isInteger(d.month) && Number.isInteger(d.day) && d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= daysInMonth(d.year, d.month)

// Days since 1970-01-01 and back (H. Hinnant's days_from_civil / civil_from_days): integer-only.
const toDayNumber = ({ year, month, day }: CalendarDate): number => {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

const fromDayNumber = (n: number): CalendarDate => {
  const z = n + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day }
}

const requireValid = (d: CalendarDate, what: string): void => {
  if (!isValidCalendarDate(d)) throw new RangeError(`${what} is not a calendar date: ${JSON.stringify(d)}`)
}

export const addDays = (date: CalendarDate, n: number): CalendarDate => {
  requireValid(date, 'addDays: date')
  if (!Number.isInteger(n)) throw new RangeError(`addDays: n must be a whole number of days, got ${String(n)}`)
  return fromDayNumber(toDayNumber(date) + n)
}

/**
 * `date` plus `n` months, keeping `date.day` where the target month has it and otherwise taking the
 * target month's last day (the spec's month-end rule for `start_date`).
 */
export const addMonths = (date: CalendarDate, n: number): CalendarDate => {
  requireValid(date, 'addMonths: date')
  if (!Number.isInteger(n)) throw new RangeError(`addMonths: n must be a whole number of months, got ${String(n)}`)
  const index = date.year * 12 + (date.month - 1) + n
  const year = Math.floor(index / 12)
  const month = index - year * 12 + 1
  return { year, month, day: Math.min(date.day, daysInMonth(year, month)) }
}

/** Negative when `a` is earlier than `b`, zero when the same day, positive when later. */
export const compareDates = (a: CalendarDate, b: CalendarDate): number => toDayNumber(a) - toDayNumber(b)

// ---- the billing schedule ----

const requireValidPlan = (plan: BillingPlan): void => {
  requireValid(plan.startDate, 'billing plan: startDate')
  if (!Number.isInteger(plan.interval) || plan.interval < 1) throw new RangeError(`billing plan: interval must be a whole number of at least 1, got ${String(plan.interval)}`)
  if (!Number.isInteger(plan.totalTerms) || plan.totalTerms < 0) throw new RangeError(`billing plan: totalTerms must be a whole number of at least 0, got ${String(plan.totalTerms)}`)
}

/**
 * The date of cycle `k` (0-based): startDate + k × interval units. Months and years are always
 * counted from the start date, never from the previous (possibly clamped) date, so a plan started on
 * the 31st bills 28/29 February and then 31 March again (Subscription, `start_date`).
 */
export const billingDate = (plan: BillingPlan, k: number): CalendarDate => {
  requireValidPlan(plan)
  if (!Number.isInteger(k) || k < 0) throw new RangeError(`billing cycle must be a whole number of at least 0, got ${String(k)}`)
  const steps = k * plan.interval
  switch (plan.intervalType) {
    case 'DAILY':
      return addDays(plan.startDate, steps)
    case 'WEEKLY':
      return addDays(plan.startDate, 7 * steps)
    case 'MONTHLY':
      return addMonths(plan.startDate, steps)
    case 'YEARLY':
      // 29 February in a common year is billed on 28 February: the same last-day rule.
      return addMonths(plan.startDate, 12 * steps)
  }
}

/** The `totalTerms` charge dates, in order. */
export const billingDates = (plan: BillingPlan): ReadonlyArray<CalendarDate> => {
  requireValidPlan(plan)
  return Array.from({ length: plan.totalTerms }, (_, k) => billingDate(plan, k))
}

/** The regular date of the next cycle after `chargesDone` cycles, or null when every term is done. */
export const nextBillingDate = (plan: BillingPlan, chargesDone: number): CalendarDate | null => {
  requireValidPlan(plan)
  return chargesDone >= plan.totalTerms ? null : billingDate(plan, chargesDone)
}

// ---- charge outcomes ----

/** Limits 5: "at most 3 attempts"; "after 3 consecutive failures the subscription becomes SUSPEND". */
export const MAX_CONSECUTIVE_FAILURES = 3

export type ChargeStatus = 'ACTIVE' | 'SUSPEND' | 'COMPLETED' | 'CANCELLED'

export type ChargeState = {
  readonly termsCharged: number
  readonly consecutiveFailures: number
  readonly status: ChargeStatus
  /** When the next charge attempt is due; null once no further attempt will ever be made. */
  readonly nextAttempt: CalendarDate | null
  /** Cycles given up without a charge (retry = N only). Absent means 0. */
  readonly termsSkipped?: number
}

/** Cycles whose turn is over, charged or skipped: the index of the cycle now being charged. */
const cyclesDone = (s: ChargeState): number => s.termsCharged + (s.termsSkipped ?? 0)

export const initialChargeState = (plan: BillingPlan): ChargeState => {
  const first = nextBillingDate(plan, 0)
  return first === null
    ? { termsCharged: 0, consecutiveFailures: 0, status: 'COMPLETED', nextAttempt: null, termsSkipped: 0 }
    : { termsCharged: 0, consecutiveFailures: 0, status: 'ACTIVE', nextAttempt: first, termsSkipped: 0 }
}

/** The state after moving on to the cycle that follows `cycles` finished cycles. */
const moveTo = (plan: BillingPlan, next: Omit<ChargeState, 'status' | 'nextAttempt'>, cycles: number): ChargeState => {
  const date = nextBillingDate(plan, cycles)
  return date === null ? { ...next, status: 'COMPLETED', nextAttempt: null } : { ...next, status: 'ACTIVE', nextAttempt: date }
}

/**
 * Applies the outcome of the charge attempt made on `attemptDate`.
 *
 * - success: the term is charged, the failure count resets, and the next attempt is the next regular
 *   billing date (COMPLETED after the last term).
 * - failure, retry = Y (Limits 5): retried on the following day; the third consecutive failure
 *   suspends the subscription and no fourth attempt is ever scheduled.
 * - failure, retry = N: the spec describes only Y. Our reading: without retry there is no next-day
 *   attempt, so the failed term is skipped (never charged) and billing continues on the next regular
 *   date. The "3 consecutive failures → SUSPEND" rule is applied as well, here to 3 consecutive failed
 *   terms, so that a dead payment method is not charged for ever.
 *
 * Only an ACTIVE subscription is charged: an outcome reported for any other status changes nothing.
 */
export const afterCharge = (plan: BillingPlanWithRetry, state: ChargeState, outcome: 'success' | 'failure', attemptDate: CalendarDate): ChargeState => {
  requireValid(attemptDate, 'afterCharge: attemptDate')
  if (state.status !== 'ACTIVE') return state
  const skipped = state.termsSkipped ?? 0
  if (outcome === 'success') {
    const next = { termsCharged: state.termsCharged + 1, consecutiveFailures: 0, termsSkipped: skipped }
    return moveTo(plan, next, cyclesDone(state) + 1)
  }
  const failures = state.consecutiveFailures + 1
  if (failures >= MAX_CONSECUTIVE_FAILURES) {
    return { termsCharged: state.termsCharged, consecutiveFailures: failures, status: 'SUSPEND', nextAttempt: null, termsSkipped: skipped }
  }
  switch (plan.retry) {
    case 'Y':
      return { termsCharged: state.termsCharged, consecutiveFailures: failures, status: 'ACTIVE', nextAttempt: addDays(attemptDate, 1), termsSkipped: skipped }
    case 'N': {
      const next = { termsCharged: state.termsCharged, consecutiveFailures: failures, termsSkipped: skipped + 1 }
      return moveTo(plan, next, cyclesDone(state) + 1)
    }
  }
}

/** Cancel (endpoint 8): no further charges. A finished subscription stays as it is. */
export const afterCancel = (state: ChargeState): ChargeState =>
  state.status === 'COMPLETED' || state.status === 'CANCELLED' ? state : { ...state, status: 'CANCELLED', nextAttempt: null }

/** Whether an attempt is due on `today` (or overdue, after the clock jumped past it). */
export const isChargeDue = (state: ChargeState, today: CalendarDate): boolean =>
  state.status === 'ACTIVE' && state.nextAttempt !== null && compareDates(state.nextAttempt, today) <= 0
