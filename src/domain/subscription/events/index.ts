import type { CallbackRejected } from '../../events/common/callback-rejected.ts'
import type { DiscrepancyObserved } from '../../events/common/discrepancy-observed.ts'
import type { NotificationReceived } from '../../events/common/notification-received.ts'
import type { RedirectReceived } from '../../events/common/redirect-received.ts'
import type { SubscriptionActivated } from './subscription-activated.ts'
import type { SubscriptionCancelled } from './subscription-cancelled.ts'
import type { SubscriptionChargeFailed } from './subscription-charge-failed.ts'
import type { SubscriptionCharged } from './subscription-charged.ts'
import type { SubscriptionCreated } from './subscription-created.ts'
import type { SubscriptionOutcomeUnknown } from './subscription-outcome-unknown.ts'
import type { SubscriptionRequestFailed } from './subscription-request-failed.ts'
import type { SubscriptionRequested } from './subscription-requested.ts'
import type { SubscriptionSuspended } from './subscription-suspended.ts'
import type { SubscriptionUpdated } from './subscription-updated.ts'

export * from './subscription-activated.ts'
export * from './subscription-cancelled.ts'
export * from './subscription-charge-failed.ts'
export * from './subscription-charged.ts'
export * from './subscription-created.ts'
export * from './subscription-outcome-unknown.ts'
export * from './subscription-request-failed.ts'
export * from './subscription-requested.ts'
export * from './subscription-suspended.ts'
export * from './subscription-updated.ts'

/** Every event of a subscription stream (`subscription-<merchant_id>-<merchant_subscribe_id>`). */
export type SubscriptionEvent =
  | SubscriptionRequested
  | SubscriptionCreated
  | SubscriptionUpdated
  | SubscriptionCancelled
  | SubscriptionRequestFailed
  | SubscriptionOutcomeUnknown
  | SubscriptionActivated
  | SubscriptionCharged
  | SubscriptionChargeFailed
  | SubscriptionSuspended
  | NotificationReceived
  | RedirectReceived
  | DiscrepancyObserved
  | CallbackRejected

export const SUBSCRIPTION_EVENT_TYPES: ReadonlyArray<SubscriptionEvent['type']> = [
  'SubscriptionRequested',
  'SubscriptionCreated',
  'SubscriptionUpdated',
  'SubscriptionCancelled',
  'SubscriptionRequestFailed',
  'SubscriptionOutcomeUnknown',
  'SubscriptionActivated',
  'SubscriptionCharged',
  'SubscriptionChargeFailed',
  'SubscriptionSuspended',
  'NotificationReceived',
  'RedirectReceived',
  'DiscrepancyObserved',
  'CallbackRejected',
]

const subscriptionTypes: ReadonlySet<string> = new Set(SUBSCRIPTION_EVENT_TYPES)

/** Whether an event belongs to a subscription stream. */
export const isSubscriptionEvent = <Ev extends { readonly type: string }>(e: Ev): e is Extract<Ev, SubscriptionEvent> => subscriptionTypes.has(e.type)
