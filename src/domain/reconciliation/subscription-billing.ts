import * as E from 'fp-ts/lib/Either.js'
import { BANGKOK_OFFSET_MS, bangkokDateOf, formatCalendarDate, parseCalendarDate, type CalendarDate } from '../bangkok-time.ts'
import type { JsonObject } from '../events/envelope.ts'
import type { Satang } from '../money.ts'
import { afterCharge, compareDates, initialChargeState, type BillingPlanWithRetry } from '../subscription-schedule.ts'
import { evolve } from '../subscription/evolve.ts'
import type { SubscriptionEvent } from '../subscription/events/index.ts'
import { billingPlanOf } from '../subscription/plan.ts'
import { initialSubscriptionState, type SubscriptionState } from '../subscription/state.ts'
import type { BreakClass } from './break-class.ts'
import { absDiff, amountIn, breakOf, matched, pending, type Comparison } from './comparison.ts'

/*
 * Subscription billing reconciliation. The gateway spec has no subscription query, so what satang
 * observed (charge and failure notifications) is compared with what the plan makes due: the charge
 * dates of subscription-schedule.ts (interval, start_date, month-end rule, total_terms), retries on
 * the following days when retry = Y, suspension after the third consecutive failure. Each date that
 * matters (a due date, an observed attempt, a suspension) is one item with one verdict.
 */

export type ChargeObservation = { readonly date: string; readonly outcome: 'success' | 'failure'; readonly amount: bigint }

export type SubscriptionItem = {
  readonly kind: 'subscription'
  readonly merchantId: string
  readonly merchantSubscribeId: string
  readonly stream: string
  /** The plan in force (null when it cannot be computed with, which a decoded plan never is). */
  readonly plan: BillingPlanWithRetry | null
  readonly billingAmount: Satang
  readonly currency: string
  /** Whether the payer authorised it (charges are due only then). */
  readonly activated: boolean
  /** Bangkok date of the accepted cancel. */
  readonly cancelledOn: string | null
  /** Bangkok date of the attempt whose failure satang recorded as the suspension. */
  readonly suspendedOn: string | null
  /** Attempts observed under the plan in force (an update restarts billing: earlier ones belong to the old plan). */
  readonly observations: ReadonlyArray<ChargeObservation>
}

/** The subscription item of a stream's events, or null before the subscription exists. */
export const subscriptionItemOf = (stream: string, events: ReadonlyArray<SubscriptionEvent>): SubscriptionItem | null => {
  let state: SubscriptionState = initialSubscriptionState
  let observations: ChargeObservation[] = []
  let cancelledOn: string | null = null
  let suspendedOn: string | null = null
  for (const e of events) {
    state = evolve(state, e)
    if (e.type === 'SubscriptionUpdated') {
      observations = []
      suspendedOn = null
    } else if (e.type === 'SubscriptionCancelled') cancelledOn = formatCalendarDate(bangkokDateOf(e.data.cancelledAt))
    else if (e.type === 'SubscriptionCharged') observations.push({ date: e.data.billingDate, outcome: 'success', amount: e.data.amount })
    else if (e.type === 'SubscriptionChargeFailed') observations.push({ date: e.data.billingDate, outcome: 'failure', amount: 0n })
    else if (e.type === 'SubscriptionSuspended') suspendedOn = observations.findLast((o) => o.outcome === 'failure')?.date ?? formatCalendarDate(bangkokDateOf(e.data.suspendedAt))
  }
  if (state._tag !== 'Subscription') return null
  return {
    kind: 'subscription',
    merchantId: state.merchantId,
    merchantSubscribeId: state.merchantSubscribeId,
    stream,
    plan: billingPlanOf(state.plan),
    billingAmount: state.plan.billingAmount,
    currency: state.plan.currency,
    activated: state.charges !== null,
    cancelledOn,
    suspendedOn,
    observations,
  }
}

/** One date of a subscription with its verdict and both sides' views. */
export type BillingDate = {
  readonly date: string
  readonly comparison: Comparison
  readonly expected: JsonObject
  readonly observed: JsonObject
}

export type BillingPolicy = {
  readonly asOf: Date
  /** A due charge is missing once this long has passed after its Bangkok day ended without an observed attempt. */
  readonly chargeGraceMs: number
}

const DAY_MS = 86_400_000
const MAX_CYCLES = 10_000

const dateOf = (text: string): CalendarDate | null => {
  const d = parseCalendarDate(text)
  return E.isRight(d) ? d.right : null
}

/** The instant a Bangkok day ends. */
const endOfDay = (d: CalendarDate): number => Date.UTC(d.year, d.month - 1, d.day) + DAY_MS - BANGKOK_OFFSET_MS

type Finding = { readonly verdict: Comparison; readonly expected: string; readonly observed: string }

// When a date has several findings, the most serious one is its verdict.
const RANK: Readonly<Record<BreakClass | 'matched' | 'pending', number>> = {
  suspension_mismatch: 6,
  unexpected_charge: 5,
  missing_charge: 4,
  amount_mismatch: 3,
  pending: 1,
  matched: 0,
  currency_mismatch: 3,
  status_conflict: 3,
  missing_at_gateway: 3,
  missing_internal: 3,
  stale_pending: 3,
  unknown_status: 3,
  refund_exceeds_payment: 3,
  query_failed: 3,
}
const rankOf = (c: Comparison): number => (c._tag === 'Break' ? RANK[c.class] : c._tag === 'Pending' ? RANK.pending : RANK.matched)

/**
 * The verdict on each date of `dates` (yyyy-MM-dd) for one subscription: `matched` when an attempt was
 * due and observed (or neither), `pending` while a due attempt is within its grace, `missing_charge`,
 * `unexpected_charge` (observed but not due: after the cancel, after the last term, twice for one
 * cycle), `suspension_mismatch` (SUSPEND without three consecutive failures, or three failures and
 * still charging). Dates with nothing due and nothing observed are left out. Pure.
 */
export const checkBilling = (item: SubscriptionItem, dates: ReadonlySet<string>, policy: BillingPolicy): ReadonlyArray<BillingDate> => {
  const findings = new Map<string, Finding>()
  const note = (date: string, f: Finding): void => {
    const current = findings.get(date)
    if (current === undefined || rankOf(f.verdict) > rankOf(current.verdict)) findings.set(date, f)
  }
  const amount = item.billingAmount
  const unconsumed = item.observations.map((o) => ({ ...o, consumed: false }))
  const horizon = [...dates, ...item.observations.map((o) => o.date)].reduce<string | null>((max, d) => (max === null || d > max ? d : max), null)
  const cancelled = item.cancelledOn === null ? null : dateOf(item.cancelledOn)

  let lastFailure: string | null = null
  let expectedSuspension: string | null = null
  if (item.plan !== null && item.activated && horizon !== null) {
    const plan = item.plan
    let state = initialChargeState(plan)
    for (let i = 0; i < MAX_CYCLES && state.status === 'ACTIVE' && state.nextAttempt !== null; i++) {
      const due = state.nextAttempt
      const dueText = formatCalendarDate(due)
      if (dueText > horizon) break
      if (cancelled !== null && compareDates(due, cancelled) > 0) break
      const observed = unconsumed.find((o) => !o.consumed && o.date === dueText)
      let outcome: 'success' | 'failure' = 'success'
      if (observed !== undefined) {
        observed.consumed = true
        outcome = observed.outcome
        note(dueText, {
          verdict: observed.outcome === 'success' && observed.amount !== amount ? breakOf('amount_mismatch', absDiff(observed.amount, amount), `charged ${amountIn(observed.amount, item.currency)}; the plan bills ${amountIn(amount, item.currency)}`) : matched,
          expected: 'attempt due',
          observed: observed.outcome,
        })
      } else if (cancelled !== null && compareDates(due, cancelled) === 0) {
        // Cancelled on the due day itself: the gateway may or may not have charged first; neither is a break.
        note(dueText, { verdict: matched, expected: 'attempt due, cancelled the same day', observed: 'none' })
      } else if (policy.asOf.getTime() >= endOfDay(due) + policy.chargeGraceMs) {
        note(dueText, { verdict: breakOf('missing_charge', amount, `a charge was due on ${dueText} and no charge or failure was observed`), expected: 'attempt due', observed: 'none' })
      } else {
        note(dueText, { verdict: pending(`a charge is due on ${dueText}; its notification may still come`), expected: 'attempt due', observed: 'none yet' })
      }
      if (outcome === 'failure') lastFailure = dueText
      state = afterCharge(plan, state, outcome, due)
      if (state.status === 'SUSPEND') expectedSuspension = lastFailure
    }
  }

  for (const o of unconsumed) {
    if (o.consumed) continue
    if (o.outcome === 'success' && expectedSuspension !== null && o.date > expectedSuspension) {
      note(o.date, { verdict: breakOf('suspension_mismatch', o.amount, `charged on ${o.date} after three consecutive failures (the last on ${expectedSuspension}) should have suspended it`), expected: 'suspended', observed: o.outcome })
    } else {
      const why = item.cancelledOn !== null && o.date > item.cancelledOn ? 'after the cancel' : 'on a date no attempt was due (after the last term, or twice for one cycle)'
      note(o.date, { verdict: breakOf('unexpected_charge', o.outcome === 'success' ? o.amount : 0n, `a ${o.outcome === 'success' ? 'charge' : 'failed attempt'} was observed on ${o.date} ${why}`), expected: 'no attempt', observed: o.outcome })
    }
  }
  if (item.suspendedOn !== null && expectedSuspension === null) {
    note(item.suspendedOn, { verdict: breakOf('suspension_mismatch', 0n, `suspended on ${item.suspendedOn} without three consecutive failed charges`), expected: 'active', observed: 'suspended' })
  }

  return [...findings.entries()]
    .filter(([date]) => dates.has(date))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([date, f]) => ({
      date,
      comparison: f.verdict,
      expected: { date, expected: f.expected, billing_amount_satang: amount.toString(), currency: item.currency },
      observed: { date, observed: f.observed },
    }))
}
