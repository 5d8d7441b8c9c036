import type { DiscrepancyObservedData } from '../events/common/discrepancy-observed.ts'
import type { ChargeState } from '../subscription-schedule.ts'
import type { SubscriptionMerchantUrls, SubscriptionOperation } from './events/subscription-requested.ts'
import type { SubscriptionPlan } from './plan.ts'

/** Where the subscription is in its life, as satang knows it. */
export type SubscriptionLifecycle = 'requested' | 'request_failed' | 'outcome_unknown' | 'created' | 'active' | 'suspended' | 'cancelled'

/** The status satang shows: the gateway's CREATED / ACTIVE / SUSPEND, and the derived others. */
export type SubscriptionDisplayStatus = 'REQUESTED' | 'REQUEST_FAILED' | 'OUTCOME_UNKNOWN' | 'CREATED' | 'ACTIVE' | 'SUSPEND' | 'COMPLETED' | 'CANCELLED'

export type PendingRequest = {
  readonly requestSeq: number
  readonly operation: SubscriptionOperation
  readonly plan: SubscriptionPlan | null
  readonly phase: 'requested' | 'outcome_unknown'
  readonly requestedAt: Date
}

export type NoSubscription = { readonly _tag: 'NoSubscription' }

export type Subscription = {
  readonly _tag: 'Subscription'
  readonly merchantId: string
  readonly merchantSubscribeId: string
  /** The plan in force (the create's, then each accepted update's). */
  readonly plan: SubscriptionPlan
  readonly merchantUrls: SubscriptionMerchantUrls
  readonly recurringBillId: string | null
  readonly linkUrl: string | null
  readonly lifecycle: SubscriptionLifecycle
  readonly pending: PendingRequest | null
  readonly lastRequestSeq: number
  /** The billing schedule (subscription-schedule.ts) once the payer authorised; null before. */
  readonly charges: ChargeState | null
  readonly observationKeys: ReadonlySet<string>
  readonly discrepancies: ReadonlyArray<DiscrepancyObservedData>
}

export type SubscriptionState = NoSubscription | Subscription

export const initialSubscriptionState: SubscriptionState = { _tag: 'NoSubscription' }

/** The status to show; `CANCELLED` is derived from SubscriptionCancelled, `COMPLETED` from the schedule. */
export const subscriptionStatusOf = (s: SubscriptionState): SubscriptionDisplayStatus | null => {
  if (s._tag === 'NoSubscription') return null
  switch (s.lifecycle) {
    case 'requested':
      return 'REQUESTED'
    case 'request_failed':
      return 'REQUEST_FAILED'
    case 'outcome_unknown':
      return 'OUTCOME_UNKNOWN'
    case 'created':
      return 'CREATED'
    case 'active':
      return s.charges?.status === 'COMPLETED' ? 'COMPLETED' : 'ACTIVE'
    case 'suspended':
      return 'SUSPEND'
    case 'cancelled':
      return 'CANCELLED'
  }
}

export const needsReview = (s: SubscriptionState): boolean => s._tag === 'Subscription' && s.discrepancies.length > 0
