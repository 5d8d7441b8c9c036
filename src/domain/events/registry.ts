/**
 * The registry of every domain event type: decode a stored `(type, schemaVersion, data)` to the newest
 * shape, encode an event for appending, natural keys and the usual metadata source. The application
 * adds the event id (`eventIdOf(naturalKeyOf(stream, e))`) and the metadata.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { EventToAppend } from './envelope.ts'
import { formatViolations } from '../violations.ts'
import { orderEventNaturalKey } from '../order/stream.ts'
import { isOrderEvent, type OrderEvent } from '../order/events/index.ts'
import { orderCreated } from '../order/events/order-created.ts'
import { paymentOutcomeUnknown } from '../order/events/payment-outcome-unknown.ts'
import { paymentRequestAccepted } from '../order/events/payment-request-accepted.ts'
import { paymentRequestFailed } from '../order/events/payment-request-failed.ts'
import { paymentRequested } from '../order/events/payment-requested.ts'
import { statusObserved } from '../order/events/status-observed.ts'
import { isRefundEvent, type RefundEvent } from '../refund/events/index.ts'
import { refundAmountReserved } from '../refund/events/refund-amount-reserved.ts'
import { refundLedgersOpened } from '../refund/events/refund-ledgers-opened.ts'
import { refundRecorded } from '../refund/events/refund-recorded.ts'
import { refundLedgerNaturalKey } from '../refund/ledger.ts'
import { refundStatusObserved } from '../refund/events/refund-status-observed.ts'
import { refundTracked } from '../refund/events/refund-tracked.ts'
import { refundEventNaturalKey } from '../refund/stream.ts'
import { isSubscriptionEvent, type SubscriptionEvent } from '../subscription/events/index.ts'
import { subscriptionActivated } from '../subscription/events/subscription-activated.ts'
import { subscriptionCancelled } from '../subscription/events/subscription-cancelled.ts'
import { subscriptionChargeFailed } from '../subscription/events/subscription-charge-failed.ts'
import { subscriptionCharged } from '../subscription/events/subscription-charged.ts'
import { subscriptionCreated } from '../subscription/events/subscription-created.ts'
import { subscriptionOutcomeUnknown } from '../subscription/events/subscription-outcome-unknown.ts'
import { subscriptionRequestFailed } from '../subscription/events/subscription-request-failed.ts'
import { subscriptionRequested } from '../subscription/events/subscription-requested.ts'
import { subscriptionSuspended } from '../subscription/events/subscription-suspended.ts'
import { subscriptionUpdated } from '../subscription/events/subscription-updated.ts'
import { subscriptionEventNaturalKey } from '../subscription/stream.ts'
import { breakEventNaturalKey, runEventNaturalKey } from '../reconciliation/stream.ts'
import {
  isBreakEvent,
  isRunEvent,
  reconciliationBreakAcknowledged,
  reconciliationBreakDetected,
  reconciliationBreakResolved,
  reconciliationItemHealed,
  reconciliationItemsChecked,
  reconciliationRunCompleted,
  reconciliationRunStarted,
  reconciliationRunSuperseded,
} from '../reconciliation/events/index.ts'
import { callbackQuarantined, quarantineNaturalKey } from './common/callback-quarantined.ts'
import { ledgerPeriodClosed } from '../ledger/events/ledger-period-closed.ts'
import { isLedgerPeriodEvent, ledgerPeriodEventNaturalKey } from '../ledger/period.ts'
import { callbackRejected } from './common/callback-rejected.ts'
import { consoleSignInLockedOut, consoleSignInNaturalKey } from './common/console-sign-in-locked-out.ts'
import { consoleSignedIn, consoleSignInFailed, consoleUserAdded, consoleUserDisabled, consoleUserNaturalKey, consoleUserPasswordReset, isConsoleSessionEvent, isConsoleUserEvent } from '../console-users/events/index.ts'
import { discrepancyObserved } from './common/discrepancy-observed.ts'
import { notificationReceived } from './common/notification-received.ts'
import { queryNotFound } from './common/query-not-found.ts'
import { redirectReceived } from './common/redirect-received.ts'
import type { DomainEventOf, EventDecodeError, EventDefinition, SerializedEvent } from './define-event.ts'
import { toStoreMetadata, type DomainEventMetadata, type EventSource } from './metadata.ts'
import type { RequestFailureReason } from './request-outcome.ts'

/** Every event type, by name. */
export const eventDefinitions = {
  OrderCreated: orderCreated,
  PaymentRequested: paymentRequested,
  PaymentRequestAccepted: paymentRequestAccepted,
  PaymentRequestFailed: paymentRequestFailed,
  PaymentOutcomeUnknown: paymentOutcomeUnknown,
  StatusObserved: statusObserved,
  RedirectReceived: redirectReceived,
  NotificationReceived: notificationReceived,
  DiscrepancyObserved: discrepancyObserved,
  CallbackRejected: callbackRejected,
  CallbackQuarantined: callbackQuarantined,
  QueryNotFound: queryNotFound,
  RefundTracked: refundTracked,
  RefundStatusObserved: refundStatusObserved,
  RefundRecorded: refundRecorded,
  RefundAmountReserved: refundAmountReserved,
  RefundLedgersOpened: refundLedgersOpened,
  SubscriptionRequested: subscriptionRequested,
  SubscriptionCreated: subscriptionCreated,
  SubscriptionUpdated: subscriptionUpdated,
  SubscriptionCancelled: subscriptionCancelled,
  SubscriptionRequestFailed: subscriptionRequestFailed,
  SubscriptionOutcomeUnknown: subscriptionOutcomeUnknown,
  SubscriptionActivated: subscriptionActivated,
  SubscriptionCharged: subscriptionCharged,
  SubscriptionChargeFailed: subscriptionChargeFailed,
  SubscriptionSuspended: subscriptionSuspended,
  ReconciliationRunStarted: reconciliationRunStarted,
  ReconciliationItemsChecked: reconciliationItemsChecked,
  ReconciliationBreakDetected: reconciliationBreakDetected,
  ReconciliationBreakResolved: reconciliationBreakResolved,
  ReconciliationItemHealed: reconciliationItemHealed,
  ReconciliationRunCompleted: reconciliationRunCompleted,
  ReconciliationRunSuperseded: reconciliationRunSuperseded,
  ReconciliationBreakAcknowledged: reconciliationBreakAcknowledged,
  LedgerPeriodClosed: ledgerPeriodClosed,
  ConsoleSignInLockedOut: consoleSignInLockedOut,
  ConsoleSignedIn: consoleSignedIn,
  ConsoleSignInFailed: consoleSignInFailed,
  ConsoleUserAdded: consoleUserAdded,
  ConsoleUserDisabled: consoleUserDisabled,
  ConsoleUserPasswordReset: consoleUserPasswordReset,
} as const

type Definitions = typeof eventDefinitions
export type DomainEventType = keyof Definitions
type DataOf<D> = D extends EventDefinition<string, infer A> ? A : never
/** Event type name → its data at the newest version. */
export type DomainEventDataMap = { readonly [K in DomainEventType]: DataOf<Definitions[K]> }
/** Any domain event (or, with `K`, the events of the named types). */
export type DomainEvent<K extends DomainEventType = DomainEventType> = { [P in K]: DomainEventOf<P, DomainEventDataMap[P]> }[K]

// Typed as a mapped type so that `registry[e.type]` and `e.data` correlate (TypeScript #47109).
const registry: { readonly [K in DomainEventType]: EventDefinition<K, DomainEventDataMap[K]> } = eventDefinitions

export const isDomainEventType = (type: string): type is DomainEventType => Object.hasOwn(eventDefinitions, type)

export const DOMAIN_EVENT_TYPES: ReadonlyArray<DomainEventType> = Object.keys(eventDefinitions).filter(isDomainEventType)

/** The newest schema version of each event type. */
export const schemaVersionOf = (type: DomainEventType): number => registry[type].schemaVersion

/**
 * Decodes a stored event: the codec of its `(type, schemaVersion)`, then upcasting to the newest
 * shape. An unknown type or version, or data that does not decode, is a typed left — never dropped.
 */
export const decodeDomainEvent = (type: string, schemaVersion: number, data: unknown): E.Either<EventDecodeError, DomainEvent> =>
  isDomainEventType(type) ? registry[type].decode(schemaVersion, data) : E.left({ _tag: 'UnknownEventType', type, schemaVersion })

/** One line for humans (audit, logs): which event could not be read, and why. */
export const describeEventDecodeError = (e: EventDecodeError): string => {
  switch (e._tag) {
    case 'UnknownEventType':
      return `unknown event type ${e.type} (schema version ${String(e.schemaVersion)})`
    case 'UnknownSchemaVersion':
      return `${e.type}: unknown schema version ${String(e.schemaVersion)} (known: ${e.knownVersions.join(', ')})`
    case 'InvalidEventData':
      return `${e.type} v${String(e.schemaVersion)}: invalid data: ${formatViolations(e.violations).replaceAll('\n', '; ')}`
  }
}

/** An event of another aggregate's stream met where one of this aggregate's was expected. */
export type UnexpectedEventType = { readonly _tag: 'UnexpectedEventType'; readonly type: string; readonly expected: 'order' | 'refund' | 'subscription' }

const decodeFor =
  <Ev extends DomainEvent>(expected: UnexpectedEventType['expected'], belongs: (e: DomainEvent) => e is Ev) =>
  (type: string, schemaVersion: number, data: unknown): E.Either<EventDecodeError | UnexpectedEventType, Ev> => {
    const decoded = decodeDomainEvent(type, schemaVersion, data)
    if (E.isLeft(decoded)) return decoded
    return belongs(decoded.right) ? E.right(decoded.right) : E.left({ _tag: 'UnexpectedEventType', type, expected })
  }

export const decodeOrderEvent = decodeFor<OrderEvent>('order', (e): e is OrderEvent => isOrderEvent(e))
export const decodeRefundEvent = decodeFor<RefundEvent>('refund', (e): e is RefundEvent => isRefundEvent(e))
export const decodeSubscriptionEvent = decodeFor<SubscriptionEvent>('subscription', (e): e is SubscriptionEvent => isSubscriptionEvent(e))

const encodeWith = <K extends DomainEventType>(e: DomainEvent<K>): SerializedEvent<K> => registry[e.type].encode(e.data)

/** An event as the store keeps it, at the newest version: `{ type, schemaVersion, data }` (JSON: satang as digit strings, instants as ISO text). */
export const encodeDomainEvent = (e: DomainEvent): SerializedEvent => encodeWith(e)

/** The whole `EventToAppend`, once the application has chosen the id and the metadata. */
export const toEventToAppend = (e: DomainEvent, eventId: string, metadata: DomainEventMetadata): EventToAppend => ({
  eventId,
  ...encodeDomainEvent(e),
  metadata: toStoreMetadata(metadata),
})

/**
 * The natural key of an event of `stream`: the application makes the event id of it (`eventIdOf`), so
 * the same fact decided twice is stored once. The events shared by several aggregates are keyed alike
 * in all of them.
 */
export const naturalKeyOf = (stream: string, e: DomainEvent): string => {
  if (isOrderEvent(e)) return orderEventNaturalKey(stream, e)
  if (isRefundEvent(e)) return refundEventNaturalKey(stream, e)
  if (isRunEvent(e)) return runEventNaturalKey(stream, e)
  if (isBreakEvent(e)) return breakEventNaturalKey(stream, e)
  if (e.type === 'CallbackQuarantined') return quarantineNaturalKey(stream, e.data.fingerprint)
  if (e.type === 'RefundAmountReserved' || e.type === 'RefundLedgersOpened') return refundLedgerNaturalKey(stream, e)
  if (isLedgerPeriodEvent(e)) return ledgerPeriodEventNaturalKey(stream, e)
  if (e.type === 'ConsoleSignInLockedOut') return consoleSignInNaturalKey(stream, e)
  if (isConsoleUserEvent(e) || isConsoleSessionEvent(e)) return consoleUserNaturalKey(stream, e)
  return subscriptionEventNaturalKey(stream, e)
}

/** Nothing left satang for `validation` and `not_sent`; `not_found_by_query` is a query's answer. */
const failureSource = (reason: RequestFailureReason): EventSource => {
  switch (reason) {
    case 'validation':
    case 'not_sent':
      return 'api_request'
    case 'gateway_rejected':
      return 'api_response'
    case 'not_found_by_query':
      return 'query'
  }
}

/**
 * The `source` an event's metadata normally carries: what brought the fact to satang. The application
 * may say better (`reconciliation` for a query made by the reconciliation job, `operator`).
 */
export const eventSourceOf = (e: DomainEvent): EventSource => {
  switch (e.type) {
    case 'OrderCreated':
    case 'PaymentRequested':
    case 'SubscriptionRequested':
      return 'api_request'
    case 'PaymentRequestFailed':
    case 'SubscriptionRequestFailed':
      return failureSource(e.data.reason)
    case 'PaymentRequestAccepted':
    case 'PaymentOutcomeUnknown':
    case 'SubscriptionUpdated':
    case 'SubscriptionCancelled':
    case 'SubscriptionOutcomeUnknown':
      return 'api_response'
    case 'SubscriptionCreated':
      return e.data.resolvedBy
    case 'RefundTracked':
      return e.data.trackedBy === 'merchant' ? 'api_request' : e.data.trackedBy
    case 'StatusObserved':
    case 'RefundStatusObserved':
    case 'RefundRecorded':
    case 'RefundAmountReserved':
      return e.data.source
    case 'RefundLedgersOpened':
      return 'operator'
    case 'DiscrepancyObserved':
      return e.data.source
    case 'RedirectReceived':
      return 'redirect'
    case 'NotificationReceived':
    case 'SubscriptionActivated':
    case 'SubscriptionCharged':
    case 'SubscriptionChargeFailed':
    case 'SubscriptionSuspended':
      return 'notification'
    case 'CallbackRejected':
    case 'CallbackQuarantined':
      return e.data.callback === 'checkout_redirect' || e.data.callback === 'subscription_redirect' ? 'redirect' : 'notification'
    case 'QueryNotFound':
      return 'query'
    case 'ReconciliationRunStarted':
    case 'ReconciliationItemsChecked':
    case 'ReconciliationBreakDetected':
    case 'ReconciliationBreakResolved':
    case 'ReconciliationItemHealed':
    case 'ReconciliationRunCompleted':
    case 'ReconciliationRunSuperseded':
      return 'reconciliation'
    case 'ReconciliationBreakAcknowledged':
    case 'LedgerPeriodClosed':
      return 'operator'
    case 'ConsoleSignInLockedOut':
    case 'ConsoleSignedIn':
    case 'ConsoleSignInFailed':
      return 'api_request'
    case 'ConsoleUserAdded':
    case 'ConsoleUserDisabled':
    case 'ConsoleUserPasswordReset':
      return 'operator'
  }
}
