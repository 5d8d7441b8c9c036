import { keyOf } from '../events/natural-key.ts'
import type { RefundEvent } from './events/index.ts'

/** The stream of one refund: `refund-<merchant_id>-<merchant_refund_id>`. */
export const refundStreamName = (merchantId: string, merchantRefundId: string): string => `refund-${merchantId}-${merchantRefundId}`

// `s`: the id may hold line breaks (\n, \r, U+2028, U+2029 are text the gateway allows), which `.` alone does not match.
const REFUND_STREAM = /^refund-(14\d{16,18})-(.+)$/s

export const parseRefundStreamName = (stream: string): { readonly merchantId: string; readonly merchantRefundId: string } | null => {
  const m = REFUND_STREAM.exec(stream)
  return m === null || m[1] === undefined || m[2] === undefined ? null : { merchantId: m[1], merchantRefundId: m[2] }
}

/** The natural key of a refund observation: source + gateway ids + status. */
export const refundObservationKey = (
  source: 'notification' | 'query',
  r: { readonly merchant_id: string; readonly merchant_refund_id: string; readonly refund_order_id: string; readonly refund_status: string },
): string => keyOf(source, r.merchant_id, r.merchant_refund_id, r.refund_order_id, r.refund_status)

/** The natural key of an event of the refund stream `stream` (see `orderEventNaturalKey`). */
export const refundEventNaturalKey = (stream: string, e: RefundEvent): string => {
  switch (e.type) {
    case 'RefundTracked':
    case 'RefundRecorded':
      return keyOf(stream, e.type)
    case 'RefundStatusObserved':
    case 'NotificationReceived':
    case 'DiscrepancyObserved':
    case 'QueryNotFound':
      return keyOf(stream, e.type, e.data.observationKey)
    case 'CallbackRejected':
      return keyOf(stream, e.type, e.data.callbackId)
  }
}
