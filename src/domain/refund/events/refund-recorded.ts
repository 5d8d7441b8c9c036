import * as t from 'io-ts'
import { Instant, nullable, ObservationSource, SatangAmount } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/**
 * The refund succeeded (a final, succeeded status such as `RS`) and its amount fits what is still
 * refundable on the order: money went back to the payer. Recorded once per refund.
 */
const V1 = t.strict(
  {
    merchantId: t.string,
    merchantRefundId: t.string,
    merchantOrderId: t.string,
    refundOrderId: t.string,
    amount: SatangAmount,
    currency: t.string,
    completeTime: nullable(Instant),
    source: ObservationSource,
    observedAt: Instant,
    observationKey: t.string,
  },
  'RefundRecordedV1',
)

export const refundRecorded = defineEvent('RefundRecorded', { 1: V1 })
export type RefundRecordedData = t.TypeOf<typeof V1>
export type RefundRecorded = DomainEventOf<'RefundRecorded', RefundRecordedData>
