import type { CallbackRejected } from '../../events/common/callback-rejected.ts'
import type { DiscrepancyObserved } from '../../events/common/discrepancy-observed.ts'
import type { NotificationReceived } from '../../events/common/notification-received.ts'
import type { QueryNotFound } from '../../events/common/query-not-found.ts'
import type { RefundRecorded } from './refund-recorded.ts'
import type { RefundStatusObserved } from './refund-status-observed.ts'
import type { RefundTracked } from './refund-tracked.ts'

export * from './refund-recorded.ts'
export * from './refund-status-observed.ts'
export * from './refund-tracked.ts'

/** Every event of a refund stream (`refund-<merchant_id>-<merchant_refund_id>`). */
export type RefundEvent = RefundTracked | RefundStatusObserved | RefundRecorded | NotificationReceived | DiscrepancyObserved | CallbackRejected | QueryNotFound

export const REFUND_EVENT_TYPES: ReadonlyArray<RefundEvent['type']> = [
  'RefundTracked',
  'RefundStatusObserved',
  'RefundRecorded',
  'NotificationReceived',
  'DiscrepancyObserved',
  'CallbackRejected',
  'QueryNotFound',
]

const refundTypes: ReadonlySet<string> = new Set(REFUND_EVENT_TYPES)

/** Whether an event belongs to a refund stream. */
export const isRefundEvent = <Ev extends { readonly type: string }>(e: Ev): e is Extract<Ev, RefundEvent> => refundTypes.has(e.type)

export * from './refund-amount-reserved.ts'
export * from './refund-ledgers-opened.ts'
