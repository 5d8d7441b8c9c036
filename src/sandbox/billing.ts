import * as E from 'fp-ts/lib/Either.js'
import { bangkokDateOf, formatCalendarDate, parseCalendarDate, type CalendarDate } from '../domain/bangkok-time.ts'
import { afterCharge, isChargeDue, type BillingPlanWithRetry } from '../domain/subscription-schedule.ts'
import { signedForm } from '../domain/gateway/signing.ts'
import { conflict, notFound, type ActionError } from './action-error.ts'
import { nowOf, type SandboxContext } from './context.ts'
import type { ChargeOutcome, SandboxSubscription, SubscriptionCharge } from './state.ts'
import { subscriptionFormFields, subscriptionNotification, type SubscriptionEventType } from './wire.ts'

/*
 * The subscription engine: deductions on the billing dates of subscription-schedule.ts (month-end rule,
 * retry = Y on the following days, SUSPEND after 3 consecutive failures), run when the payer
 * authorises, when sandbox time moves (control API) and once a minute as real time passes.
 */

// A clock jump of years over a daily plan makes many charges; this only stops a defect from looping for ever.
const MAX_CHARGES_PER_RUN = 100_000

const calendarDate = (text: string): CalendarDate => {
  const parsed = parseCalendarDate(text)
  // Every date in the store was written by the sandbox (or decoded from the state file) as yyyy-MM-dd.
  if (E.isLeft(parsed)) throw new Error(`stored date ${text} is not a calendar date`)
  return parsed.right
}

export const planOf = (s: Pick<SandboxSubscription, 'startDate' | 'intervalType' | 'interval' | 'totalTerms' | 'retry'>): BillingPlanWithRetry => ({
  startDate: calendarDate(s.startDate),
  intervalType: s.intervalType,
  interval: s.interval,
  totalTerms: s.totalTerms,
  retry: s.retry,
})

/** One deduction attempt for the date that is due; its outcome is the next one set, else SUCCESS. */
const chargeOnce = (ctx: SandboxContext, s: SandboxSubscription, type: SubscriptionEventType): SandboxSubscription => {
  const date = s.charge.nextAttempt
  if (date === null) return s
  const [scripted, ...rest] = s.outcomes
  const outcome: ChargeOutcome = scripted ?? 'SUCCESS'
  const charge = afterCharge(planOf(s), s.charge, outcome === 'SUCCESS' ? 'success' : 'failure', date)
  const record: SubscriptionCharge = {
    cycle: s.charge.termsCharged + (s.charge.termsSkipped ?? 0) + 1,
    date: formatCalendarDate(date),
    at: nowOf(ctx).text,
    outcome,
    type,
  }
  const charged: SandboxSubscription = {
    ...s,
    charge,
    status: charge.status === 'SUSPEND' ? 'SUSPEND' : s.status,
    outcomes: rest,
    charges: [...s.charges, record],
  }
  ctx.store.putSubscription(charged)
  if (charged.notifyUrl !== undefined) ctx.notify('SUBSCRIPTION', charged.notifyUrl, subscriptionNotification(charged, type, outcome, record.date))
  return charged
}

/** Whether the engine bills this subscription at all. */
const billable = (s: SandboxSubscription): boolean => s.authorised && !s.cancelled

/**
 * Every attempt due on or before `today`, oldest first. The first one is of `firstType`
 * (Created_Deducted, Updated_Deducted), the others `Deducted`.
 */
export const chargeDue = (ctx: SandboxContext, s: SandboxSubscription, today: CalendarDate, firstType: SubscriptionEventType = 'Deducted'): SandboxSubscription => {
  let current = s
  for (let i = 0; i < MAX_CHARGES_PER_RUN && billable(current) && isChargeDue(current.charge, today); i++) {
    current = chargeOnce(ctx, current, i === 0 ? firstType : 'Deducted')
  }
  return current
}

/** Runs every due charge of every subscription at sandbox time `now`; returns the attempts made. */
export const runBilling = (ctx: SandboxContext, now: Date): ReadonlyArray<SubscriptionCharge & { readonly recurringBillId: string }> => {
  const today = bangkokDateOf(now)
  return ctx.store.subscriptions().flatMap((s) => {
    if (!billable(s) || !isChargeDue(s.charge, today)) return []
    const after = chargeDue(ctx, s, today)
    return after.charges.slice(s.charges.length).map((c) => ({ ...c, recurringBillId: s.recurringBillId }))
  })
}

/** The signed endpoint 9 form and where the payer's browser posts it. */
export type SubscriptionRedirect = { readonly url: string; readonly fields: Readonly<Record<string, unknown>> }

/**
 * The payer authorises on the subscription page: the subscription becomes ACTIVE; when billing starts
 * today the first deduction runs now (type Created_Deducted), otherwise the type is Created. Returns the
 * endpoint 9 form for `redirect_url` (if the merchant gave one); the notification is sent either way.
 */
export const authoriseSubscription = (
  ctx: SandboxContext,
  recurringBillId: string,
): E.Either<ActionError, { readonly subscription: SandboxSubscription; readonly redirect?: SubscriptionRedirect }> => {
  const s = ctx.store.subscription(recurringBillId)
  if (s === undefined) return E.left(notFound(`no subscription with recurring_bill_id ${recurringBillId}`))
  if (s.cancelled) return E.left(conflict(`subscription ${s.merchantSubscribeId} is cancelled`))
  if (s.authorised) return E.left(conflict(`subscription ${s.merchantSubscribeId} is already authorised`))
  const authorised: SandboxSubscription = { ...s, authorised: true, status: s.status === 'CREATED' ? 'ACTIVE' : s.status }
  ctx.store.putSubscription(authorised)
  const today = bangkokDateOf(ctx.clock.now())
  let after: SandboxSubscription
  let type: SubscriptionEventType
  let status: 'SUCCESS' | 'FAIL'
  if (isChargeDue(authorised.charge, today)) {
    after = chargeDue(ctx, authorised, today, 'Created_Deducted')
    type = 'Created_Deducted'
    status = after.charges[s.charges.length]?.outcome ?? 'SUCCESS'
  } else {
    after = authorised
    type = 'Created'
    status = 'SUCCESS'
    if (after.notifyUrl !== undefined) ctx.notify('SUBSCRIPTION', after.notifyUrl, subscriptionNotification(after, type, status))
  }
  const redirect = after.redirectUrl === undefined ? undefined : { url: after.redirectUrl, fields: signedForm(ctx.signer, subscriptionFormFields(after, type, status)) }
  return E.right({ subscription: after, ...(redirect === undefined ? {} : { redirect }) })
}

/** Sets the outcomes of the next charges (replacing those set before). */
export const setChargeOutcomes = (ctx: SandboxContext, recurringBillId: string, outcomes: ReadonlyArray<ChargeOutcome>): E.Either<ActionError, SandboxSubscription> => {
  const s = ctx.store.subscription(recurringBillId)
  if (s === undefined) return E.left(notFound(`no subscription with recurring_bill_id ${recurringBillId}`))
  const updated = { ...s, outcomes: [...outcomes] }
  ctx.store.putSubscription(updated)
  return E.right(updated)
}
