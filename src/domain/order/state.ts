import type { DiscrepancyObservedData } from '../events/common/discrepancy-observed.ts'
import type { ObservationSource } from '../events/codecs.ts'
import type { OutcomeUnknownReason, RequestFailureReason } from '../events/request-outcome.ts'
import type { StatusClassification } from '../gateway/statuses.ts'
import type { Satang } from '../money.ts'
import type { OrderCreatedData } from './events/order-created.ts'

/** Where the create request stands. `resolved_by_observation`: its outcome was unknown until the gateway reported the order. */
export type PaymentRequestPhase =
  | { readonly phase: 'not_requested' }
  | { readonly phase: 'requested'; readonly requestedAt: Date }
  | { readonly phase: 'accepted'; readonly acceptedAt: Date; readonly linkUrl: string | null }
  | { readonly phase: 'failed'; readonly reason: RequestFailureReason; readonly failedAt: Date }
  | { readonly phase: 'outcome_unknown'; readonly reason: OutcomeUnknownReason; readonly since: Date }
  | { readonly phase: 'resolved_by_observation'; readonly resolvedAt: Date }

/** The payment status satang holds: from the create answer or an authoritative observation. */
export type CurrentStatus = {
  readonly code: string
  readonly classification: StatusClassification
  readonly source: 'api_response' | ObservationSource
  readonly observedAt: Date
}

export type NoOrder = { readonly _tag: 'NoOrder' }

export type Order = {
  readonly _tag: 'Order'
  readonly order: OrderCreatedData
  readonly request: PaymentRequestPhase
  readonly gatewayOrderId: string | null
  /** A final status never regresses. An unknown code is kept here only while no final status is known. */
  readonly status: CurrentStatus | null
  /** What the last redirect said: evidence, shown next to the status and never applied to it. */
  readonly redirectStatus: string | null
  /** Natural keys of the observations, redirects and discrepancies recorded: the same one twice is one event. */
  readonly observationKeys: ReadonlySet<string>
  readonly discrepancies: ReadonlyArray<DiscrepancyObservedData>
  /** Status codes the table did not know, in the order observed (kept, non-final, flagged for review). */
  readonly unclassifiedStatuses: ReadonlyArray<string>
}

export type OrderState = NoOrder | Order

export const initialOrderState: OrderState = { _tag: 'NoOrder' }

export const isFinal = (s: CurrentStatus | null): s is CurrentStatus => s !== null && s.classification.final

/** Paid: the gateway reported a final, succeeded status by notification or query (never by redirect alone). */
export const isPaid = (s: OrderState): boolean =>
  s._tag === 'Order' && s.status !== null && s.status.classification.final && s.status.classification.outcome === 'succeeded'

/** The satang paid (the order amount once paid), or null. */
export const paidAmountOf = (s: OrderState): Satang | null => (s._tag === 'Order' && isPaid(s) ? s.order.amount : null)

/**
 * Whether the create's outcome is still open: requested with no outcome recorded (satang may have
 * stopped in between) or unknown. The application resolves these by a payment query, never by sending
 * the create again.
 */
export const awaitsOutcome = (s: OrderState): boolean => s._tag === 'Order' && (s.request.phase === 'requested' || s.request.phase === 'outcome_unknown')

/** Whether a person should look at the order: a discrepancy was recorded or an unknown status code observed. */
export const needsReview = (s: OrderState): boolean => s._tag === 'Order' && (s.discrepancies.length > 0 || s.unclassifiedStatuses.length > 0)
