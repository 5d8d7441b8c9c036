import type { CallbackRejected } from '../../events/common/callback-rejected.ts'
import type { DiscrepancyObserved } from '../../events/common/discrepancy-observed.ts'
import type { NotificationReceived } from '../../events/common/notification-received.ts'
import type { QueryNotFound } from '../../events/common/query-not-found.ts'
import type { RedirectReceived } from '../../events/common/redirect-received.ts'
import type { OrderCreated } from './order-created.ts'
import type { PaymentOutcomeUnknown } from './payment-outcome-unknown.ts'
import type { PaymentRequestAccepted } from './payment-request-accepted.ts'
import type { PaymentRequestFailed } from './payment-request-failed.ts'
import type { PaymentRequested } from './payment-requested.ts'
import type { StatusObserved } from './status-observed.ts'

export * from './order-created.ts'
export * from './payment-outcome-unknown.ts'
export * from './payment-request-accepted.ts'
export * from './payment-request-failed.ts'
export * from './payment-requested.ts'
export * from './status-observed.ts'

/** Every event of an order stream (`order-<merchant_id>-<merchant_order_id>`). */
export type OrderEvent =
  | OrderCreated
  | PaymentRequested
  | PaymentRequestAccepted
  | PaymentRequestFailed
  | PaymentOutcomeUnknown
  | StatusObserved
  | RedirectReceived
  | NotificationReceived
  | DiscrepancyObserved
  | CallbackRejected
  | QueryNotFound

export const ORDER_EVENT_TYPES: ReadonlyArray<OrderEvent['type']> = [
  'OrderCreated',
  'PaymentRequested',
  'PaymentRequestAccepted',
  'PaymentRequestFailed',
  'PaymentOutcomeUnknown',
  'StatusObserved',
  'RedirectReceived',
  'NotificationReceived',
  'DiscrepancyObserved',
  'CallbackRejected',
  'QueryNotFound',
]

const orderTypes: ReadonlySet<string> = new Set(ORDER_EVENT_TYPES)

/** Whether an event belongs to an order stream. */
export const isOrderEvent = <Ev extends { readonly type: string }>(e: Ev): e is Extract<Ev, OrderEvent> => orderTypes.has(e.type)
