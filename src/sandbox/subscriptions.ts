import * as E from 'fp-ts/lib/Either.js'
import { bangkokDateOf, formatCalendarDate, parseCalendarDate } from '../domain/bangkok-time.ts'
import type { SubscriptionCancelRequest, SubscriptionCreateRequest, SubscriptionUpdateRequest } from '../domain/gateway/subscription.ts'
import { formatAmount, parseAmount } from '../domain/money.ts'
import { afterCancel, compareDates, initialChargeState, isChargeDue } from '../domain/subscription-schedule.ts'
import { chargeDue, planOf } from './billing.ts'
import { nowOf, type SandboxContext } from './context.ts'
import { invalidParameters, reject, type SandboxRejection } from './error-table.ts'
import { recurringBillId } from './ids.ts'
import type { SandboxSubscription } from './state.ts'
import { subscriptionNotification } from './wire.ts'

type Plan = Pick<SubscriptionCreateRequest, 'plan_name' | 'plan_desc' | 'interval_type' | 'interval' | 'total_terms' | 'billing_amount' | 'billing_currency' | 'retry' | 'start_date'>

/**
 * `start_date`: "default is the current date (starts at once)". A date before today (sandbox time,
 * Bangkok) could never be billed on, so it is rejected.
 */
const startDateOf = (ctx: SandboxContext, plan: Plan): E.Either<SandboxRejection, string> => {
  const today = bangkokDateOf(ctx.clock.now())
  if (plan.start_date === undefined) return E.right(formatCalendarDate(today))
  const start = parseCalendarDate(plan.start_date)
  if (E.isLeft(start)) return E.left(invalidParameters(start.left.map((rule) => ({ path: 'start_date', rule }))))
  if (compareDates(start.right, today) < 0) {
    return E.left(invalidParameters([{ path: 'start_date', rule: `must not be before today (${formatCalendarDate(today)}, Asia/Bangkok)` }]))
  }
  return E.right(plan.start_date)
}

/** The plan fields of a request as the record keeps them; the charge state starts over with the plan. */
const planFields = (plan: Plan, startDate: string) => {
  const amount = parseAmount(plan.billing_amount)
  const fields = {
    planName: plan.plan_name,
    intervalType: plan.interval_type,
    interval: Number(plan.interval),
    totalTerms: Number(plan.total_terms),
    // The request codec has checked the amount.
    billingAmount: E.isRight(amount) ? formatAmount(amount.right) : plan.billing_amount,
    billingCurrency: plan.billing_currency,
    retry: plan.retry,
    startDate,
  }
  return { ...fields, ...(plan.plan_desc === undefined ? {} : { planDesc: plan.plan_desc }) }
}

/** Endpoint 6: a CREATED subscription whose `link_url` is the page where the payer authorises it. */
export const createSubscription = (ctx: SandboxContext, req: SubscriptionCreateRequest): E.Either<SandboxRejection, Record<string, unknown>> => {
  if (ctx.store.subscriptionOf(req.merchant_id, req.merchant_subscribe_id) !== undefined) {
    return E.left(reject('duplicateId', `merchant_subscribe_id ${req.merchant_subscribe_id} already exists`))
  }
  const start = startDateOf(ctx, req)
  if (E.isLeft(start)) return start
  const now = nowOf(ctx)
  const billId = recurringBillId(now.instant, ctx.store.nextSequence())
  const plan = planFields(req, start.right)
  const base = { ...plan, merchantId: req.merchant_id, merchantSubscribeId: req.merchant_subscribe_id, recurringBillId: billId }
  const subscription: SandboxSubscription = {
    ...base,
    status: 'CREATED',
    createTime: now.text,
    linkUrl: `${ctx.baseUrl()}/subscriptions/${billId}`,
    authorised: false,
    cancelled: false,
    charge: initialChargeState(planOf(plan)),
    outcomes: [],
    charges: [],
    customer: req.customer,
    ...(req.store_id === undefined ? {} : { storeId: req.store_id }),
    ...(req.notify_url === undefined ? {} : { notifyUrl: req.notify_url }),
    ...(req.redirect_url === undefined ? {} : { redirectUrl: req.redirect_url }),
  }
  ctx.store.putSubscription(subscription)
  return E.right({
    merchant_id: subscription.merchantId,
    merchant_subscribe_id: subscription.merchantSubscribeId,
    recurring_bill_id: subscription.recurringBillId,
    recurring_bill_status: subscription.status,
    create_time: subscription.createTime,
    link_url: subscription.linkUrl,
  })
}

const findSubscription = (ctx: SandboxContext, merchantId: string, merchantSubscribeId: string): E.Either<SandboxRejection, SandboxSubscription> => {
  const s = ctx.store.subscriptionOf(merchantId, merchantSubscribeId)
  return s === undefined ? E.left(reject('notFound', `no subscription with merchant_subscribe_id ${merchantSubscribeId}`)) : E.right(s)
}

/**
 * Endpoint 7: the plan is replaced and its schedule starts over from `start_date` (default today);
 * the status becomes ACTIVE (the spec's update response) and consecutive failures are forgotten. When
 * the authorised subscription is due today it is billed now (Updated_Deducted), else notified Updated.
 */
export const updateSubscription = (ctx: SandboxContext, req: SubscriptionUpdateRequest): E.Either<SandboxRejection, Record<string, unknown>> => {
  const found = findSubscription(ctx, req.merchant_id, req.merchant_subscribe_id)
  if (E.isLeft(found)) return found
  const s = found.right
  if (s.cancelled) return E.left(reject('invalidState', `subscription ${s.merchantSubscribeId} is cancelled`))
  const start = startDateOf(ctx, req)
  if (E.isLeft(start)) return start
  const replanned = { ...s, ...planFields(req, start.right) }
  const updated: SandboxSubscription = {
    ...replanned,
    status: 'ACTIVE',
    charge: initialChargeState(planOf(replanned)),
    updateTime: nowOf(ctx).text,
  }
  ctx.store.putSubscription(updated)
  const today = bangkokDateOf(ctx.clock.now())
  if (updated.authorised && isChargeDue(updated.charge, today)) {
    chargeDue(ctx, updated, today, 'Updated_Deducted')
  } else if (updated.notifyUrl !== undefined) {
    ctx.notify('SUBSCRIPTION', updated.notifyUrl, subscriptionNotification(updated, 'Updated', 'SUCCESS'))
  }
  return E.right({
    merchant_id: updated.merchantId,
    merchant_subscribe_id: updated.merchantSubscribeId,
    recurring_bill_id: updated.recurringBillId,
    recurring_bill_status: 'ACTIVE',
    link_url: updated.linkUrl,
    create_time: updated.createTime,
  })
}

/** Endpoint 8: no further charges. Cancelling twice is not an error. The response has no `data`. */
export const cancelSubscription = (ctx: SandboxContext, req: SubscriptionCancelRequest): E.Either<SandboxRejection, undefined> => {
  const found = findSubscription(ctx, req.merchant_id, req.merchant_subscribe_id)
  if (E.isLeft(found)) return found
  const s = found.right
  if (!s.cancelled) ctx.store.putSubscription({ ...s, cancelled: true, charge: afterCancel(s.charge), cancelTime: nowOf(ctx).text })
  return E.right(undefined)
}
