import * as t from 'io-ts'
import { Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { RedactedPayload } from '../../events/redaction.ts'
import { OrderOperation } from './order-created.ts'

/**
 * Recorded before the create is sent: `request` holds the wire fields exactly as sent, payer data
 * redacted. Exactly one of PaymentRequestAccepted, PaymentRequestFailed or PaymentOutcomeUnknown follows.
 */
const V1 = t.strict({ operation: OrderOperation, service: t.string, request: RedactedPayload, requestedAt: Instant }, 'PaymentRequestedV1')

export const paymentRequested = defineEvent('PaymentRequested', { 1: V1 })
export type PaymentRequestedData = t.TypeOf<typeof V1>
export type PaymentRequested = DomainEventOf<'PaymentRequested', PaymentRequestedData>
