import * as t from 'io-ts'
import { Instant, nullable, ObservationSource, SatangAmount, StatusClassificationCodec } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/** An authoritative observation of a refund (notification or refund query), as the gateway reported it. */
const V1 = t.strict(
  {
    merchantId: t.string,
    merchantRefundId: t.string,
    merchantOrderId: t.string,
    gatewayOrderId: t.string,
    refundOrderId: t.string,
    statusCode: t.string,
    classification: StatusClassificationCodec,
    amount: SatangAmount,
    currency: t.string,
    completeTime: nullable(Instant),
    source: ObservationSource,
    observedAt: Instant,
    /** source + gateway ids + status: the same observation twice is one event. */
    observationKey: t.string,
    traceId: nullable(t.string),
  },
  'RefundStatusObservedV1',
)

export const refundStatusObserved = defineEvent('RefundStatusObserved', { 1: V1 })
export type RefundStatusObservedData = t.TypeOf<typeof V1>
export type RefundStatusObserved = DomainEventOf<'RefundStatusObserved', RefundStatusObservedData>
