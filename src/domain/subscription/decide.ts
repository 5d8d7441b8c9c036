import * as E from 'fp-ts/lib/Either.js'
import { badSignature } from '../events/common/callback-rejected.ts'
import { discrepancyObserved, mismatchesOf, type Mismatch } from '../events/common/discrepancy-observed.ts'
import { notificationReceived } from '../events/common/notification-received.ts'
import { redirectReceived } from '../events/common/redirect-received.ts'
import { gatewayInstantOf, presentText, satangOf } from '../events/gateway-values.ts'
import { keyOf } from '../events/natural-key.ts'
import { redactPayerData } from '../events/redaction.ts'
import { failureFields } from '../events/request-outcome.ts'
import type { SubscriptionNotification } from '../gateway/notification.ts'
import type {
  ReceiveSubscriptionNotification,
  ReceiveSubscriptionRedirect,
  RecordSubscriptionCancelled,
  RecordSubscriptionCreated,
  RecordSubscriptionOutcomeUnknown,
  RecordSubscriptionRequestFailed,
  RecordSubscriptionUpdated,
  RequestSubscription,
  RequestSubscriptionCancel,
  RequestSubscriptionUpdate,
  SubscriptionCommand,
} from './commands.ts'
import { evolve } from './evolve.ts'
import type { SubscriptionEvent } from './events/index.ts'
import { subscriptionActivated } from './events/subscription-activated.ts'
import { subscriptionCancelled } from './events/subscription-cancelled.ts'
import { subscriptionChargeFailed } from './events/subscription-charge-failed.ts'
import { subscriptionCharged } from './events/subscription-charged.ts'
import { subscriptionCreated } from './events/subscription-created.ts'
import { subscriptionOutcomeUnknown } from './events/subscription-outcome-unknown.ts'
import { subscriptionRequestFailed } from './events/subscription-request-failed.ts'
import { subscriptionRequested, type SubscriptionOperation } from './events/subscription-requested.ts'
import { subscriptionSuspended } from './events/subscription-suspended.ts'
import { subscriptionUpdated } from './events/subscription-updated.ts'
import { planOfRequest } from './plan.ts'
import type { SubscriptionRejection } from './rejections.ts'
import type { PendingRequest, Subscription, SubscriptionState } from './state.ts'
import { callbackDateOf, subscriptionObservationKey } from './stream.ts'

type Decision = E.Either<SubscriptionRejection, ReadonlyArray<SubscriptionEvent>>

const reject = (r: SubscriptionRejection): Decision => E.left(r)
const events = (...es: ReadonlyArray<SubscriptionEvent>): Decision => E.right(es)
const nothing: Decision = E.right([])

const idMismatches = (s: Subscription, r: { readonly merchant_id: string; readonly merchant_subscribe_id: string }): Array<Mismatch> =>
  mismatchesOf([
    ['merchant_id', s.merchantId, r.merchant_id],
    ['merchant_subscribe_id', s.merchantSubscribeId, r.merchant_subscribe_id],
  ])

const requestSubscription = (c: RequestSubscription, s: SubscriptionState): Decision => {
  if (s._tag === 'Subscription') return reject({ _tag: 'SubscriptionAlreadyExists', merchantId: s.merchantId, merchantSubscribeId: s.merchantSubscribeId })
  const plan = planOfRequest(c.request, c.requestedAt)
  if (E.isLeft(plan)) return reject({ _tag: 'InvalidPlan', violations: plan.left })
  return events(
    subscriptionRequested.make({
      requestSeq: 1,
      operation: 'create',
      merchantId: c.request.merchant_id,
      merchantSubscribeId: c.request.merchant_subscribe_id,
      plan: plan.right,
      merchantUrls: c.merchantUrls,
      request: redactPayerData(c.request),
      requestedAt: c.requestedAt,
    }),
  )
}

/**
 * Whether a new update or cancel may be sent now: not while another request waits for its answer,
 * and never while the create's outcome is unknown. An update or cancel whose outcome is unknown may be
 * requested again (both are idempotent at the gateway; the new request supersedes it).
 */
const blockingRequest = (p: PendingRequest | null): SubscriptionRejection | null =>
  p !== null && (p.phase === 'requested' || p.operation === 'create') ? { _tag: 'SubscriptionRequestPending', operation: p.operation, phase: p.phase } : null

const changeable = (s: Subscription): SubscriptionRejection | null => {
  const blocking = blockingRequest(s.pending)
  if (blocking !== null) return blocking
  if (s.lifecycle === 'cancelled') return { _tag: 'SubscriptionIsCancelled' }
  if (s.lifecycle === 'requested' || s.lifecycle === 'request_failed' || s.lifecycle === 'outcome_unknown') return { _tag: 'SubscriptionNotCreated', lifecycle: s.lifecycle }
  return null
}

const requestUpdate = (c: RequestSubscriptionUpdate, s: Subscription): Decision => {
  const refused = changeable(s)
  if (refused !== null) return reject(refused)
  const mismatches = idMismatches(s, c.request)
  if (mismatches.length > 0) return reject({ _tag: 'RequestDoesNotMatchSubscription', mismatches })
  const plan = planOfRequest(c.request, c.requestedAt)
  if (E.isLeft(plan)) return reject({ _tag: 'InvalidPlan', violations: plan.left })
  return events(
    subscriptionRequested.make({
      requestSeq: s.lastRequestSeq + 1,
      operation: 'update',
      merchantId: s.merchantId,
      merchantSubscribeId: s.merchantSubscribeId,
      plan: plan.right,
      merchantUrls: null,
      request: redactPayerData(c.request),
      requestedAt: c.requestedAt,
    }),
  )
}

const requestCancel = (c: RequestSubscriptionCancel, s: Subscription): Decision => {
  if (s.lifecycle === 'cancelled') return nothing
  const refused = changeable(s)
  if (refused !== null) return reject(refused)
  const mismatches = idMismatches(s, c.request)
  if (mismatches.length > 0) return reject({ _tag: 'RequestDoesNotMatchSubscription', mismatches })
  return events(
    subscriptionRequested.make({
      requestSeq: s.lastRequestSeq + 1,
      operation: 'cancel',
      merchantId: s.merchantId,
      merchantSubscribeId: s.merchantSubscribeId,
      plan: null,
      merchantUrls: null,
      request: redactPayerData(c.request),
      requestedAt: c.requestedAt,
    }),
  )
}

/** The request waiting for its answer, when it is of `operation`. */
const awaiting = (s: Subscription, operation: SubscriptionOperation | 'any'): PendingRequest | null =>
  s.pending !== null && s.pending.phase === 'requested' && (operation === 'any' || s.pending.operation === operation) ? s.pending : null

const recordCreated = (c: RecordSubscriptionCreated, s: Subscription): Decision => {
  const pending = awaiting(s, 'create')
  if (pending === null) return reject({ _tag: 'NoSubscriptionRequestPending', expected: 'create' })
  const r = c.response
  const created = subscriptionCreated.make({
    requestSeq: pending.requestSeq,
    recurringBillId: r.recurring_bill_id,
    gatewayStatus: r.recurring_bill_status,
    linkUrl: r.link_url,
    createTime: gatewayInstantOf(r.create_time),
    traceId: c.traceId,
    resolvedBy: 'api_response',
    response: redactPayerData(r),
    receivedAt: c.receivedAt,
  })
  const mismatches = [...idMismatches(s, r), ...mismatchesOf([['recurring_bill_id', s.recurringBillId, r.recurring_bill_id]])]
  if (mismatches.length === 0) return events(created)
  return events(
    created,
    discrepancyObserved.make({ source: 'api_response', observationKey: keyOf('api_response', String(pending.requestSeq)), observedAt: c.receivedAt, statusCode: r.recurring_bill_status, mismatches }),
  )
}

const recordUpdated = (c: RecordSubscriptionUpdated, s: Subscription): Decision => {
  const pending = awaiting(s, 'update')
  if (pending === null || pending.plan === null) return reject({ _tag: 'NoSubscriptionRequestPending', expected: 'update' })
  const r = c.response
  return events(
    subscriptionUpdated.make({
      requestSeq: pending.requestSeq,
      recurringBillId: r.recurring_bill_id,
      gatewayStatus: r.recurring_bill_status,
      linkUrl: presentText(r.link_url),
      traceId: c.traceId,
      plan: pending.plan,
      response: redactPayerData(r),
      receivedAt: c.receivedAt,
    }),
  )
}

const recordCancelled = (c: RecordSubscriptionCancelled, s: Subscription): Decision => {
  const pending = awaiting(s, 'cancel')
  if (pending === null) return reject({ _tag: 'NoSubscriptionRequestPending', expected: 'cancel' })
  return events(subscriptionCancelled.make({ requestSeq: pending.requestSeq, traceId: c.traceId, cancelledAt: c.receivedAt }))
}

const recordFailed = (c: RecordSubscriptionRequestFailed, s: Subscription): Decision => {
  const pending = awaiting(s, 'any')
  if (pending === null) return reject({ _tag: 'NoSubscriptionRequestPending', expected: 'any' })
  return events(subscriptionRequestFailed.make({ requestSeq: pending.requestSeq, operation: pending.operation, ...failureFields(c.failure), failedAt: c.failedAt }))
}

const recordUnknown = (c: RecordSubscriptionOutcomeUnknown, s: Subscription): Decision => {
  const pending = awaiting(s, 'any')
  if (pending === null) return reject({ _tag: 'NoSubscriptionRequestPending', expected: 'any' })
  return events(
    subscriptionOutcomeUnknown.make({ requestSeq: pending.requestSeq, operation: pending.operation, reason: c.reason, httpStatus: c.httpStatus, traceId: c.traceId, since: c.since }),
  )
}

const DEDUCTIONS: ReadonlySet<string> = new Set(['Created_Deducted', 'Updated_Deducted', 'Deducted'])

/** What a callback about this subscription disagrees with: its ids, and the plan's amount and currency when it reports them. */
const callbackMismatches = (
  s: Subscription,
  f: { readonly merchant_id: string; readonly merchant_subscribe_id: string; readonly recurring_bill_id: string; readonly billing_amount?: string | null; readonly billing_currency?: string | null },
): Array<Mismatch> => {
  const amountText = presentText(f.billing_amount)
  const currency = presentText(f.billing_currency)
  return [
    ...idMismatches(s, f),
    ...mismatchesOf([
      ['recurring_bill_id', s.recurringBillId, f.recurring_bill_id],
      ['amount', amountText === null ? null : s.plan.billingAmount.toString(), amountText === null ? null : (satangOf(amountText)?.toString() ?? null)],
      ['currency', currency === null ? null : s.plan.currency, currency],
    ]),
  ]
}

/**
 * A verified SUBSCRIPTION notification: authority. It resolves a create whose outcome was unknown,
 * activates a subscription the payer authorised, and records a deduction's outcome; three consecutive
 * failed deductions suspend the subscription (subscription-schedule.ts). Each event is decided on the
 * state left by the ones before it.
 */
const receiveNotification = (c: ReceiveSubscriptionNotification, s: Subscription): Decision => {
  const n: SubscriptionNotification = c.notification
  const billingDate = callbackDateOf(n, c.receivedAt)
  const key = subscriptionObservationKey('notification', n, billingDate)
  if (s.observationKeys.has(key)) return nothing
  const type = presentText(n.type)
  const received = notificationReceived.make({ kind: 'SUBSCRIPTION', observationKey: key, receivedAt: c.receivedAt, payload: redactPayerData(n) })
  const mismatches = callbackMismatches(s, n)
  if (mismatches.length > 0) {
    return events(received, discrepancyObserved.make({ source: 'notification', observationKey: key, observedAt: c.receivedAt, statusCode: n.status, mismatches }))
  }

  const decided: SubscriptionEvent[] = [received]
  const stateNow = (): Subscription => {
    const next = decided.reduce(evolve, s)
    return next._tag === 'Subscription' ? next : s
  }
  if (s.pending?.operation === 'create' && s.pending.phase === 'outcome_unknown') {
    decided.push(
      subscriptionCreated.make({
        requestSeq: s.pending.requestSeq,
        recurringBillId: n.recurring_bill_id,
        gatewayStatus: 'CREATED',
        linkUrl: null,
        createTime: null,
        traceId: null,
        resolvedBy: 'notification',
        response: null,
        receivedAt: c.receivedAt,
      }),
    )
  }
  const deduction = type !== null && DEDUCTIONS.has(type)
  const lifecycle = stateNow().lifecycle
  if ((lifecycle === 'created' || lifecycle === 'requested') && (deduction || n.status === 'SUCCESS')) {
    decided.push(subscriptionActivated.make({ recurringBillId: n.recurring_bill_id, observationKey: key, notificationType: type, activatedAt: c.receivedAt }))
  }
  if (!deduction) return events(...decided)

  if (n.status === 'SUCCESS') {
    const amountText = presentText(n.billing_amount)
    const reported = amountText === null ? null : satangOf(amountText)
    decided.push(
      subscriptionCharged.make({
        recurringBillId: n.recurring_bill_id,
        observationKey: key,
        notificationType: type,
        billingDate,
        amount: reported ?? s.plan.billingAmount,
        currency: presentText(n.billing_currency) ?? s.plan.currency,
        amountReported: reported !== null,
        observedAt: c.receivedAt,
      }),
    )
    return events(...decided)
  }
  const before = stateNow()
  decided.push(subscriptionChargeFailed.make({ recurringBillId: n.recurring_bill_id, observationKey: key, notificationType: type, billingDate, observedAt: c.receivedAt }))
  const after = stateNow()
  if (before.charges?.status !== 'SUSPEND' && after.charges?.status === 'SUSPEND' && after.lifecycle !== 'suspended') {
    decided.push(
      subscriptionSuspended.make({
        recurringBillId: n.recurring_bill_id,
        observationKey: key,
        consecutiveFailures: after.charges.consecutiveFailures,
        reason: 'consecutive_failed_charges',
        suspendedAt: c.receivedAt,
      }),
    )
  }
  return events(...decided)
}

/** The subscription redirect form (endpoint 9) is evidence: kept and checked, never applied. */
const receiveRedirect = (c: ReceiveSubscriptionRedirect, s: Subscription): Decision => {
  const key = subscriptionObservationKey('redirect', c.form, callbackDateOf(c.form, c.receivedAt))
  if (s.observationKeys.has(key)) return nothing
  const received = redirectReceived.make({ kind: 'SUBSCRIPTION', observationKey: key, status: c.form.status, receivedAt: c.receivedAt, payload: redactPayerData(c.form) })
  const mismatches = callbackMismatches(s, c.form)
  return mismatches.length === 0
    ? events(received)
    : events(received, discrepancyObserved.make({ source: 'redirect', observationKey: key, observedAt: c.receivedAt, statusCode: c.form.status, mismatches }))
}

const withSubscription = (s: SubscriptionState, f: (sub: Subscription) => Decision): Decision =>
  s._tag === 'Subscription' ? f(s) : reject({ _tag: 'SubscriptionNotFound' })

/** What a command means for a subscription: the events to append, or why it is refused. Pure. */
export const decide = (c: SubscriptionCommand, s: SubscriptionState): Decision => {
  switch (c.type) {
    case 'RequestSubscription':
      return requestSubscription(c, s)
    case 'RequestSubscriptionUpdate':
      return withSubscription(s, (sub) => requestUpdate(c, sub))
    case 'RequestSubscriptionCancel':
      return withSubscription(s, (sub) => requestCancel(c, sub))
    case 'RecordSubscriptionCreated':
      return withSubscription(s, (sub) => recordCreated(c, sub))
    case 'RecordSubscriptionUpdated':
      return withSubscription(s, (sub) => recordUpdated(c, sub))
    case 'RecordSubscriptionCancelled':
      return withSubscription(s, (sub) => recordCancelled(c, sub))
    case 'RecordSubscriptionRequestFailed':
      return withSubscription(s, (sub) => recordFailed(c, sub))
    case 'RecordSubscriptionOutcomeUnknown':
      return withSubscription(s, (sub) => recordUnknown(c, sub))
    case 'ReceiveSubscriptionNotification':
      if (!c.signature.verified) return events(badSignature('subscription_notification', c.signature, c.callbackId, c.receivedAt, c.notification))
      return withSubscription(s, (sub) => receiveNotification(c, sub))
    case 'ReceiveSubscriptionRedirect':
      if (!c.signature.verified) return events(badSignature('subscription_redirect', c.signature, c.callbackId, c.receivedAt, c.form))
      return withSubscription(s, (sub) => receiveRedirect(c, sub))
  }
}
