import type { Mismatch } from '../events/common/discrepancy-observed.ts'
import type { Violation } from '../violations.ts'
import type { SubscriptionOperation } from './events/subscription-requested.ts'
import type { SubscriptionLifecycle } from './state.ts'

/** Commands the subscription aggregate refuses. */
export type SubscriptionRejection =
  | { readonly _tag: 'SubscriptionAlreadyExists'; readonly merchantId: string; readonly merchantSubscribeId: string }
  | { readonly _tag: 'SubscriptionNotFound' }
  | { readonly _tag: 'SubscriptionNotCreated'; readonly lifecycle: SubscriptionLifecycle }
  | { readonly _tag: 'SubscriptionIsCancelled' }
  /** Another request of this subscription is waiting for its outcome (an unknown create blocks everything). */
  | { readonly _tag: 'SubscriptionRequestPending'; readonly operation: SubscriptionOperation; readonly phase: 'requested' | 'outcome_unknown' }
  | { readonly _tag: 'NoSubscriptionRequestPending'; readonly expected: SubscriptionOperation | 'any' }
  | { readonly _tag: 'RequestDoesNotMatchSubscription'; readonly mismatches: ReadonlyArray<Mismatch> }
  | { readonly _tag: 'InvalidPlan'; readonly violations: ReadonlyArray<Violation> }
