import type { RefundNotification } from '../../../src/domain/gateway/notification.ts'
import type { RefundRecord } from '../../../src/domain/gateway/refund-query.ts'
import { DEFAULT_REFUND_STATUS_TABLE } from '../../../src/domain/gateway/statuses.ts'
import {
  decide,
  evolve,
  initialRefundState,
  refundTracked,
  type ObserveRefundByQuery,
  type ReceiveRefundNotification,
  type RefundEvent,
  type RefundOrderContext,
  type TrackRefund,
} from '../../../src/domain/refund/index.ts'
import { ORDER_ID } from '../order/builders.ts'
import { deciderSpec } from '../support/decider-spec.ts'
import { at, GATEWAY_ORDER_ID, MERCHANT_ID } from '../support/values.ts'

export const REFUND_ID = 'REFUND-1'
export const REFUND_ORDER_ID = '202601020000000001'

export const given = deciderSpec({ initialState: initialRefundState, evolve, decide })

export const aTrackRefund = (o: Partial<TrackRefund> = {}): TrackRefund => ({
  type: 'TrackRefund',
  merchantId: MERCHANT_ID,
  merchantRefundId: REFUND_ID,
  merchantOrderId: ORDER_ID,
  trackedAt: at(10),
  ...o,
})

export const aRefundTracked = (): RefundEvent =>
  refundTracked.make({ merchantId: MERCHANT_ID, merchantRefundId: REFUND_ID, merchantOrderId: ORDER_ID, trackedBy: 'merchant', trackedAt: at(10) })

/** The order of the refund was paid 100.00 THB and nothing else was refunded. */
export const aPaidOrder = (o: Partial<RefundOrderContext> = {}): RefundOrderContext => ({ paidAmount: 10000n, currency: 'THB', refundedByOthers: 0n, ...o })

export const aRefundRecord = (o: Partial<RefundRecord> = {}): RefundRecord => ({
  merchant_id: MERCHANT_ID,
  merchant_refund_id: REFUND_ID,
  merchant_order_id: ORDER_ID,
  order_id: GATEWAY_ORDER_ID,
  refund_order_id: REFUND_ORDER_ID,
  refund_amount: '40.00',
  refund_currency: 'THB',
  refund_status: 'RS',
  refund_reason: 'customer returned the cup',
  create_time: '2026-01-02 10:00:00',
  complete_time: '2026-01-02 10:00:05',
  ...o,
})

export const aRefundNotification = (o: Partial<RefundNotification> = {}): RefundNotification => ({
  notify_type: 'REFUND',
  ...aRefundRecord(),
  sign_type: 'RSA',
  sign: 'c2lnbmF0dXJl',
  ...o,
})

export const refundNotified = (
  notification: RefundNotification,
  o: { readonly verified?: boolean; readonly order?: RefundOrderContext; readonly at?: Date } = {},
): ReceiveRefundNotification => ({
  type: 'ReceiveRefundNotification',
  notification,
  signature: o.verified === false ? { verified: false, reason: 'bad signature' } : { verified: true },
  callbackId: 'req-r1',
  receivedAt: o.at ?? at(20),
  statusTable: DEFAULT_REFUND_STATUS_TABLE,
  order: o.order ?? aPaidOrder(),
})

export const refundQueried = (answer: RefundRecord, o: { readonly order?: RefundOrderContext; readonly at?: Date } = {}): ObserveRefundByQuery => ({
  type: 'ObserveRefundByQuery',
  answer,
  traceId: 'trace-rq',
  observedAt: o.at ?? at(21),
  statusTable: DEFAULT_REFUND_STATUS_TABLE,
  order: o.order ?? aPaidOrder(),
})
