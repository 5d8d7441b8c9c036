import * as t from 'io-ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { escapeRefusedCharacters, escapeRefusedFields } from '../../gateway/text-rules.ts'
import { Instant, nullable, ViolationCodec } from '../codecs.ts'
import { defineEvent, type DomainEventOf } from '../define-event.ts'
import type { Violation } from '../../violations.ts'
import { RedactedPayload, redactPayerData } from '../redaction.ts'

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
 * request id); `payload` is what could be parsed of it, payer data redacted, or null. Characters no
 * text may hold (NUL and other control characters, lone surrogates: text-rules.ts) are kept in
 * `payload` and in violation paths as `\uXXXX` escapes, so that such a callback can be kept at all.
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

/** A callback refused for its signature or its shape. Pure: what could be parsed of it is redacted here. */
export type CallbackRejection = {
  readonly callback: CallbackKind
  readonly reason: CallbackRejectionReason
  readonly detail: string
  readonly violations: ReadonlyArray<Violation>
  /** The delivery attempt (the application's request id): each refused attempt is kept once. */
  readonly callbackId: string
  readonly receivedAt: Date
  /** The fields as received, when they could be parsed into an object; redacted before they are kept. */
  readonly payload: Readonly<Record<string, unknown>> | null
}

export const rejectCallback = (r: CallbackRejection): CallbackRejected =>
  callbackRejected.make({
    callback: r.callback,
    reason: r.reason,
    detail: r.detail,
    violations: r.violations.map((v) => ({ path: escapeRefusedCharacters(v.path), rule: escapeRefusedCharacters(v.rule) })),
    callbackId: r.callbackId,
    receivedAt: r.receivedAt,
    payload: r.payload === null ? null : redactPayerData(escapeRefusedFields(r.payload)),
  })

/** The rejection of a callback whose signature did not verify. */
export const badSignature = (
  callback: CallbackKind,
  signature: { readonly reason?: string },
  callbackId: string,
  receivedAt: Date,
  payload: Readonly<Record<string, unknown>>,
): CallbackRejected =>
  rejectCallback({ callback, reason: 'bad_signature', detail: signature.reason ?? 'signature did not verify', violations: [], callbackId, receivedAt, payload })
