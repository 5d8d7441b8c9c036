import { keyOf } from '../events/natural-key.ts'
import type { OrderEvent } from './events/index.ts'

/** The stream of one order: `order-<merchant_id>-<merchant_order_id>`. */
export const orderStreamName = (merchantId: string, merchantOrderId: string): string => `order-${merchantId}-${merchantOrderId}`

// merchant_id is digits only, so the first dash after it ends it (merchant_order_id may hold dashes).
// `s`: the id may hold line breaks (\n, \r, U+2028, U+2029 are text the gateway allows), which `.` alone does not match.
const ORDER_STREAM = /^order-(14\d{16,18})-(.+)$/s

/** The ids of an order stream name, or null when the name is not one. */
export const parseOrderStreamName = (stream: string): { readonly merchantId: string; readonly merchantOrderId: string } | null => {
  const m = ORDER_STREAM.exec(stream)
  return m === null || m[1] === undefined || m[2] === undefined ? null : { merchantId: m[1], merchantOrderId: m[2] }
}

/** Where a payment observation came from; a redirect is evidence, the others authority. */
export type PaymentObservationOrigin = 'notification' | 'query' | 'redirect' | 'api_response'

/** The natural key of a payment observation: source + gateway ids + status (issue 5). */
export const paymentObservationKey = (
  origin: PaymentObservationOrigin,
  o: { readonly merchant_id: string; readonly merchant_order_id: string; readonly order_id: string; readonly order_status: string },
): string => keyOf(origin, o.merchant_id, o.merchant_order_id, o.order_id, o.order_status)

/**
 * Whether an order event is a claim: a step of the create request's cycle. The decider allows one per
 * order, and whoever appends it first has the right to act on it (send the create, record its
 * outcome). A natural key cannot tell two writers of the same claim apart (the store would answer the
 * second "already stored", as it does a retry), so the application keys a claim by the command that
 * decided it as well: two concurrent writers race on the stream revision and exactly one wins.
 */
export const isOrderClaim = (e: OrderEvent): boolean => {
  switch (e.type) {
    case 'OrderCreated':
    case 'PaymentRequested':
    case 'PaymentRequestAccepted':
    case 'PaymentRequestFailed':
    case 'PaymentOutcomeUnknown':
      return true
    case 'StatusObserved':
    case 'RedirectReceived':
    case 'NotificationReceived':
    case 'DiscrepancyObserved':
    case 'CallbackRejected':
    case 'QueryNotFound':
      return false
  }
}

/**
 * The natural key of an event of the order stream `stream`: the application derives the event id from
 * it (`eventIdOf`), so the same fact decided twice is stored once. Request-cycle events happen once
 * per order; observations are keyed by their observation key; refused callbacks by delivery attempt.
 */
export const orderEventNaturalKey = (stream: string, e: OrderEvent): string => {
  switch (e.type) {
    case 'OrderCreated':
    case 'PaymentRequested':
    case 'PaymentRequestAccepted':
    case 'PaymentRequestFailed':
    case 'PaymentOutcomeUnknown':
      return keyOf(stream, e.type)
    case 'StatusObserved':
    case 'RedirectReceived':
    case 'NotificationReceived':
    case 'DiscrepancyObserved':
    case 'QueryNotFound':
      return keyOf(stream, e.type, e.data.observationKey)
    case 'CallbackRejected':
      return keyOf(stream, e.type, e.data.callbackId)
  }
}
