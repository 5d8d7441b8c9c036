import * as t from 'io-ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { Instant, nullable, ViolationCodec } from '../codecs.ts'
import { defineEvent, type DomainEventOf } from '../define-event.ts'
import { RedactedPayload } from '../redaction.ts'

export const CallbackKind = oneOf('CallbackKind', [
  'payment_notification',
  'refund_notification',
  'subscription_notification',
  'notification',
  'checkout_redirect',
  'subscription_redirect',
])
export type CallbackKind = t.TypeOf<typeof CallbackKind>

export const CallbackRejectionReason = oneOf('CallbackRejectionReason', ['bad_signature', 'undecodable'])
export type CallbackRejectionReason = t.TypeOf<typeof CallbackRejectionReason>

/**
 * A callback that was refused: its signature did not verify, or it could not be decoded. Kept for
 * audit only; it changes no state. `callbackId` identifies the delivery attempt (the application's
 * request id); `payload` is what could be parsed of it, payer data redacted, or null.
 */
const V1 = t.strict(
  {
    callback: CallbackKind,
    reason: CallbackRejectionReason,
    detail: t.string,
    violations: t.array(ViolationCodec),
    callbackId: t.string,
    receivedAt: Instant,
    payload: nullable(RedactedPayload),
  },
  'CallbackRejectedV1',
)

export const callbackRejected = defineEvent('CallbackRejected', { 1: V1 })
export type CallbackRejectedData = t.TypeOf<typeof V1>
export type CallbackRejected = DomainEventOf<'CallbackRejected', CallbackRejectedData>
