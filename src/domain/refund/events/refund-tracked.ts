import * as t from 'io-ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/** `merchant`: a merchant registered the refund to track; `notification` / `query`: the gateway reported a refund nobody registered. */
export const TrackedBy = oneOf('TrackedBy', ['merchant', 'notification', 'query'])
export type TrackedBy = t.TypeOf<typeof TrackedBy>

/**
 * A merchant_refund_id is tracked for an order. The gateway spec shows no refund request: refunds enter
 * the ledger through refund notifications and refund queries.
 */
const V1 = t.strict(
  { merchantId: t.string, merchantRefundId: t.string, merchantOrderId: t.string, trackedBy: TrackedBy, trackedAt: Instant },
  'RefundTrackedV1',
)

export const refundTracked = defineEvent('RefundTracked', { 1: V1 })
export type RefundTrackedData = t.TypeOf<typeof V1>
export type RefundTracked = DomainEventOf<'RefundTracked', RefundTrackedData>
