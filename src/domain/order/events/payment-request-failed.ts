import * as t from 'io-ts'
import { Instant, Integer, nullable, ViolationCodec } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { RequestFailureReason } from '../../events/request-outcome.ts'

/** The create definitely did not take effect (see `RequestFailure`). Final for this order: a new payment needs a new merchant_order_id. */
const V1 = t.strict(
  {
    reason: RequestFailureReason,
    code: nullable(Integer),
    message: nullable(t.string),
    traceId: nullable(t.string),
    violations: t.array(ViolationCodec),
    failedAt: Instant,
  },
  'PaymentRequestFailedV1',
)

export const paymentRequestFailed = defineEvent('PaymentRequestFailed', { 1: V1 })
export type PaymentRequestFailedData = t.TypeOf<typeof V1>
export type PaymentRequestFailed = DomainEventOf<'PaymentRequestFailed', PaymentRequestFailedData>
