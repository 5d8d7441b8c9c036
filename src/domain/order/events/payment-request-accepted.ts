import * as t from 'io-ts'
import { Instant, nullable, SatangAmount, StatusClassificationCodec } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { RedactedPayload } from '../../events/redaction.ts'

/**
 * The gateway accepted the create (endpoint 1 or 4 answered code 200000). `response` is the answer's
 * `data` (what the payer needs: link, QR code, SDK parameters), payer data redacted.
 */
const V1 = t.strict(
  {
    gatewayOrderId: t.string,
    statusCode: t.string,
    classification: StatusClassificationCodec,
    amount: SatangAmount,
    currency: t.string,
    createTime: nullable(Instant),
    linkUrl: nullable(t.string),
    traceId: t.string,
    response: RedactedPayload,
    receivedAt: Instant,
  },
  'PaymentRequestAcceptedV1',
)

export const paymentRequestAccepted = defineEvent('PaymentRequestAccepted', { 1: V1 })
export type PaymentRequestAcceptedData = t.TypeOf<typeof V1>
export type PaymentRequestAccepted = DomainEventOf<'PaymentRequestAccepted', PaymentRequestAcceptedData>
