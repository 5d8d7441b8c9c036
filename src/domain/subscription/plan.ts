import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { bangkokDateOf, CalendarDateText, formatCalendarDate, parseCalendarDate } from '../bangkok-time.ts'
import { nullable, PositiveInt, SatangAmount } from '../events/codecs.ts'
import { satangOf } from '../events/gateway-values.ts'
import { IntervalType, Retry, type SubscriptionCreateRequest, type SubscriptionUpdateRequest } from '../gateway/subscription.ts'
import { isValidCalendarDate, type BillingPlanWithRetry } from '../subscription-schedule.ts'
import type { Violation } from '../violations.ts'

/** What a subscription charges and when, as satang keeps it (amounts in satang, counts as numbers). */
export const SubscriptionPlan = t.strict(
  {
    planName: t.string,
    planDesc: nullable(t.string),
    intervalType: IntervalType,
    interval: PositiveInt,
    totalTerms: PositiveInt,
    billingAmount: SatangAmount,
    currency: t.string,
    retry: Retry,
    /** The first billing date: `start_date` as sent, or the Bangkok date of the request ("default is the current date"). */
    startDate: CalendarDateText,
    /** `start_date` as sent, null when the gateway's default applied. */
    startDateRequested: nullable(CalendarDateText),
  },
  'SubscriptionPlan',
)
export type SubscriptionPlan = t.TypeOf<typeof SubscriptionPlan>

const positive = (path: string, text: string, violations: Violation[]): number => {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(n) || n < 1) violations.push({ path, rule: 'must be a whole number of at least 1' })
  return n
}

/** The plan of a create or update request (decoded by the gateway codecs, so its fields are valid). */
export const planOfRequest = (r: SubscriptionCreateRequest | SubscriptionUpdateRequest, requestedAt: Date): E.Either<ReadonlyArray<Violation>, SubscriptionPlan> => {
  const violations: Violation[] = []
  const interval = positive('interval', r.interval, violations)
  const totalTerms = positive('total_terms', r.total_terms, violations)
  const billingAmount = satangOf(r.billing_amount)
  if (billingAmount === null) violations.push({ path: 'billing_amount', rule: 'must be an amount' })
  if (violations.length > 0 || billingAmount === null) return E.left(violations)
  return E.right({
    planName: r.plan_name,
    planDesc: r.plan_desc ?? null,
    intervalType: r.interval_type,
    interval,
    totalTerms,
    billingAmount,
    currency: r.billing_currency,
    retry: r.retry,
    startDate: r.start_date ?? formatCalendarDate(bangkokDateOf(requestedAt)),
    startDateRequested: r.start_date ?? null,
  })
}

/** The plan as subscription-schedule.ts computes with it, or null when it cannot be (never for a decoded plan). */
export const billingPlanOf = (p: SubscriptionPlan): BillingPlanWithRetry | null => {
  const start = parseCalendarDate(p.startDate)
  if (E.isLeft(start) || !isValidCalendarDate(start.right)) return null
  if (!Number.isSafeInteger(p.interval) || p.interval < 1 || !Number.isSafeInteger(p.totalTerms) || p.totalTerms < 0) return null
  return { startDate: start.right, intervalType: p.intervalType, interval: p.interval, totalTerms: p.totalTerms, retry: p.retry }
}
