import type { SignatureResult } from '../events/metadata.ts'
import type { RefundNotification } from '../gateway/notification.ts'
import type { RefundRecord } from '../gateway/refund-query.ts'
import type { StatusTable } from '../gateway/statuses.ts'

/**
 * What the refund's order allows, as the application read it when deciding: the refund aggregate sees
 * one stream only. Build it with `refundOrderContext` from the order's state and the other refunds of
 * the order.
 */
export type RefundOrderContext = {
  /** The satang paid on the order, or null when satang does not know it as paid. */
  readonly paidAmount: bigint | null
  readonly currency: string | null
  /** The satang of the order's OTHER refunds already recorded (RefundRecorded); a sum, so not capped like one amount. */
  readonly refundedByOthers: bigint
}

/** A merchant registers a merchant_refund_id to track for one of its orders. */
export type TrackRefund = {
  readonly type: 'TrackRefund'
  readonly merchantId: string
  readonly merchantRefundId: string
  readonly merchantOrderId: string
  readonly trackedAt: Date
}

/** A refund query answered (endpoint 3): authority. */
export type ObserveRefundByQuery = {
  readonly type: 'ObserveRefundByQuery'
  readonly answer: RefundRecord
  readonly traceId: string | null
  readonly observedAt: Date
  readonly statusTable: StatusTable
  readonly order: RefundOrderContext
}

/** A refund query answered "not found": evidence, changes no status. */
export type ObserveRefundNotFound = {
  readonly type: 'ObserveRefundNotFound'
  readonly code: number
  readonly message: string
  readonly traceId: string
  readonly observedAt: Date
}

/** A REFUND notification with its signature result: authority when it verified. */
export type ReceiveRefundNotification = {
  readonly type: 'ReceiveRefundNotification'
  readonly notification: RefundNotification
  readonly signature: SignatureResult
  readonly callbackId: string
  readonly receivedAt: Date
  readonly statusTable: StatusTable
  readonly order: RefundOrderContext
}

export type RefundCommand = TrackRefund | ObserveRefundByQuery | ObserveRefundNotFound | ReceiveRefundNotification
