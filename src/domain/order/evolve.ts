import type { OrderEvent } from './events/index.ts'
import type { StatusObservedData } from './events/status-observed.ts'
import { initialOrderState, isFinal, type CurrentStatus, type Order, type OrderState } from './state.ts'

const withKey = (s: Order, key: string): ReadonlySet<string> => new Set([...s.observationKeys, key])

/** A final status never regresses; otherwise the latest authoritative observation is the status. */
const nextStatus = (current: CurrentStatus | null, observed: StatusObservedData): CurrentStatus | null =>
  isFinal(current) ? current : { code: observed.statusCode, classification: observed.classification, source: observed.source, observedAt: observed.observedAt }

const evolveOrder = (s: Order, e: OrderEvent): Order => {
  switch (e.type) {
    case 'OrderCreated':
      return s
    case 'PaymentRequested':
      return { ...s, request: { phase: 'requested', requestedAt: e.data.requestedAt } }
    case 'PaymentRequestAccepted': {
      const d = e.data
      // The answer's status is used only when nothing was observed yet (a notification may have come first)
      // and only when the answer agrees with the order (otherwise a DiscrepancyObserved follows it).
      const agrees = d.amount === s.order.amount && d.currency === s.order.currency
      return {
        ...s,
        request: { phase: 'accepted', acceptedAt: d.receivedAt, linkUrl: d.linkUrl },
        gatewayOrderId: s.gatewayOrderId ?? d.gatewayOrderId,
        status: s.status === null && agrees ? { code: d.statusCode, classification: d.classification, source: 'api_response', observedAt: d.receivedAt } : s.status,
      }
    }
    case 'PaymentRequestFailed':
      return { ...s, request: { phase: 'failed', reason: e.data.reason, failedAt: e.data.failedAt } }
    case 'PaymentOutcomeUnknown':
      // Already resolved when the gateway reported the order before the outcome was written down.
      return s.status !== null && s.status.source !== 'api_response'
        ? { ...s, request: { phase: 'resolved_by_observation', resolvedAt: s.status.observedAt } }
        : { ...s, request: { phase: 'outcome_unknown', reason: e.data.reason, since: e.data.since } }
    case 'StatusObserved': {
      const d = e.data
      return {
        ...s,
        request: s.request.phase === 'outcome_unknown' ? { phase: 'resolved_by_observation', resolvedAt: d.observedAt } : s.request,
        gatewayOrderId: s.gatewayOrderId ?? d.gatewayOrderId,
        status: nextStatus(s.status, d),
        observationKeys: withKey(s, d.observationKey),
        unclassifiedStatuses: d.classification.needsReview ? [...s.unclassifiedStatuses, d.statusCode] : s.unclassifiedStatuses,
      }
    }
    case 'RedirectReceived':
      return { ...s, redirectStatus: e.data.status, observationKeys: withKey(s, e.data.observationKey) }
    case 'NotificationReceived':
      return { ...s, observationKeys: withKey(s, e.data.observationKey) }
    case 'DiscrepancyObserved':
      return { ...s, observationKeys: withKey(s, e.data.observationKey), discrepancies: [...s.discrepancies, e.data] }
    case 'CallbackRejected':
      // A refused callback is kept for audit and changes nothing.
      return s
    case 'QueryNotFound':
      // Evidence only: a create is failed by PaymentRequestFailed, never by this.
      return { ...s, observationKeys: withKey(s, e.data.observationKey) }
  }
}

/** The state after `e`. Total: an event that does not apply to the state leaves it as it is. */
export const evolve = (s: OrderState, e: OrderEvent): OrderState => {
  if (s._tag === 'Order') return evolveOrder(s, e)
  if (e.type !== 'OrderCreated') return s
  return {
    _tag: 'Order',
    order: e.data,
    request: { phase: 'not_requested' },
    gatewayOrderId: null,
    status: null,
    redirectStatus: null,
    observationKeys: new Set(),
    discrepancies: [],
    unclassifiedStatuses: [],
  }
}

/** The state of a stream of events. */
export const fold = (events: ReadonlyArray<OrderEvent>): OrderState => events.reduce(evolve, initialOrderState)
