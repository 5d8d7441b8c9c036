import * as E from 'fp-ts/lib/Either.js'
import { parseCalendarDate } from '../bangkok-time.ts'
import type { SubscriptionStatus } from '../gateway/statuses.ts'
import { afterCancel, afterCharge, initialChargeState, type ChargeState } from '../subscription-schedule.ts'
import type { SubscriptionEvent } from './events/index.ts'
import { billingPlanOf, type SubscriptionPlan } from './plan.ts'
import { initialSubscriptionState, type Subscription, type SubscriptionLifecycle, type SubscriptionState } from './state.ts'

const withKey = (s: Subscription, key: string): ReadonlySet<string> => new Set([...s.observationKeys, key])

const lifecycleOf = (status: SubscriptionStatus): SubscriptionLifecycle => {
  switch (status) {
    case 'CREATED':
      return 'created'
    case 'ACTIVE':
      return 'active'
    case 'SUSPEND':
      return 'suspended'
  }
}

const startCharges = (plan: SubscriptionPlan): ChargeState | null => {
  const billing = billingPlanOf(plan)
  return billing === null ? null : initialChargeState(billing)
}

/** The schedule after a charge outcome on `billingDate` (subscription-schedule.ts: retry, SUSPEND after 3). */
const charged = (s: Subscription, outcome: 'success' | 'failure', billingDate: string): ChargeState | null => {
  const billing = billingPlanOf(s.plan)
  const date = parseCalendarDate(billingDate)
  if (s.charges === null || billing === null || E.isLeft(date)) return s.charges
  return afterCharge(billing, s.charges, outcome, date.right)
}

const evolveSubscription = (s: Subscription, e: SubscriptionEvent): Subscription => {
  switch (e.type) {
    case 'SubscriptionRequested': {
      const d = e.data
      if (d.operation === 'create') return s
      return { ...s, pending: { requestSeq: d.requestSeq, operation: d.operation, plan: d.plan, phase: 'requested', requestedAt: d.requestedAt }, lastRequestSeq: d.requestSeq }
    }
    case 'SubscriptionCreated': {
      const d = e.data
      const waiting = s.lifecycle === 'requested' || s.lifecycle === 'outcome_unknown'
      return {
        ...s,
        recurringBillId: s.recurringBillId ?? d.recurringBillId,
        linkUrl: d.linkUrl ?? s.linkUrl,
        lifecycle: waiting ? lifecycleOf(d.gatewayStatus) : s.lifecycle,
        pending: s.pending?.operation === 'create' ? null : s.pending,
      }
    }
    case 'SubscriptionUpdated': {
      const d = e.data
      // The gateway restarts billing of an updated plan from its start date.
      return { ...s, plan: d.plan, linkUrl: d.linkUrl ?? s.linkUrl, lifecycle: lifecycleOf(d.gatewayStatus), pending: null, charges: startCharges(d.plan) }
    }
    case 'SubscriptionCancelled':
      return { ...s, lifecycle: 'cancelled', pending: null, charges: s.charges === null ? null : afterCancel(s.charges) }
    case 'SubscriptionRequestFailed':
      return { ...s, pending: null, lifecycle: e.data.operation === 'create' ? 'request_failed' : s.lifecycle }
    case 'SubscriptionOutcomeUnknown':
      return {
        ...s,
        pending: s.pending === null ? null : { ...s.pending, phase: 'outcome_unknown' },
        lifecycle: e.data.operation === 'create' && s.lifecycle === 'requested' ? 'outcome_unknown' : s.lifecycle,
      }
    case 'SubscriptionActivated':
      return {
        ...s,
        recurringBillId: s.recurringBillId ?? e.data.recurringBillId,
        lifecycle: 'active',
        charges: s.charges ?? startCharges(s.plan),
        observationKeys: withKey(s, e.data.observationKey),
      }
    case 'SubscriptionCharged':
      return { ...s, charges: charged(s, 'success', e.data.billingDate), observationKeys: withKey(s, e.data.observationKey) }
    case 'SubscriptionChargeFailed':
      // Stryker disable next-line StringLiteral: afterCharge treats every outcome other than 'success' as a failure
      return { ...s, charges: charged(s, 'failure', e.data.billingDate), observationKeys: withKey(s, e.data.observationKey) }
    case 'SubscriptionSuspended':
      return { ...s, lifecycle: s.lifecycle === 'cancelled' ? s.lifecycle : 'suspended', observationKeys: withKey(s, e.data.observationKey) }
    case 'NotificationReceived':
    case 'RedirectReceived':
      return { ...s, observationKeys: withKey(s, e.data.observationKey) }
    case 'DiscrepancyObserved':
      return { ...s, observationKeys: withKey(s, e.data.observationKey), discrepancies: [...s.discrepancies, e.data] }
    case 'CallbackRejected':
      return s
  }
}

/** The state after `e`; total. */
export const evolve = (s: SubscriptionState, e: SubscriptionEvent): SubscriptionState => {
  if (s._tag === 'Subscription') return evolveSubscription(s, e)
  if (e.type !== 'SubscriptionRequested' || e.data.operation !== 'create') return s
  const d = e.data
  const plan = d.plan
  if (plan === null) return s
  return {
    _tag: 'Subscription',
    merchantId: d.merchantId,
    merchantSubscribeId: d.merchantSubscribeId,
    plan,
    merchantUrls: d.merchantUrls ?? { notifyUrl: null, redirectUrl: null },
    recurringBillId: null,
    linkUrl: null,
    lifecycle: 'requested',
    pending: { requestSeq: d.requestSeq, operation: 'create', plan, phase: 'requested', requestedAt: d.requestedAt },
    lastRequestSeq: d.requestSeq,
    charges: null,
    observationKeys: new Set(),
    discrepancies: [],
  }
}

export const fold = (events: ReadonlyArray<SubscriptionEvent>): SubscriptionState => events.reduce(evolve, initialSubscriptionState)
