import * as t from 'io-ts'
import { bangkokDateOf, formatCalendarDate } from '../../bangkok-time.ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { escapeRefusedCharacters, escapeRefusedFields } from '../../gateway/text-rules.ts'
import type { Violation } from '../../violations.ts'
import { Instant, nullable, ViolationCodec } from '../codecs.ts'
import { defineEvent, type DomainEventOf } from '../define-event.ts'
import { keyOf } from '../natural-key.ts'
import { RedactedPayload, redactPayerData } from '../redaction.ts'
import { CallbackKind } from './callback-rejected.ts'

/**
 * Why a callback was not trusted: its signature did not verify, it names another merchant, or it
 * cannot be read (not JSON, not an object, fields that break the gateway spec or a length limit).
 */
export const QuarantineReason = oneOf('QuarantineReason', ['bad_signature', 'unknown_merchant', 'undecodable'])
export type QuarantineReason = t.TypeOf<typeof QuarantineReason>

/** The ids a quarantined callback claims, as sent (escaped, clipped): what `satang audit` finds it by. */
const ClaimedIds = t.strict(
  {
    merchantId: nullable(t.string),
    merchantOrderId: nullable(t.string),
    merchantRefundId: nullable(t.string),
    merchantSubscribeId: nullable(t.string),
  },
  'ClaimedIds',
)

/**
 * A callback satang did not trust, kept in the quarantine stream of its source and Bangkok day
 * (`quarantine-<notification|redirect>-<YYYY-MM-DD>`), never on the order, refund or subscription it
 * names. `fingerprint` is the SHA-256 (hex) of what was received (the raw body and the headers that
 * shape it): the event id derives from it, so the same bytes delivered again are this one event.
 * `payload` is what could be parsed (payer data redacted, strings clipped), or null.
 */
const V1 = t.strict(
  {
    callback: CallbackKind,
    reason: QuarantineReason,
    detail: t.string,
    violations: t.array(ViolationCodec),
    fingerprint: t.string,
    signatureVerified: t.boolean,
    claimed: ClaimedIds,
    receivedAt: Instant,
    payload: nullable(RedactedPayload),
  },
  'CallbackQuarantinedV1',
)

export const callbackQuarantined = defineEvent('CallbackQuarantined', { 1: V1 })
export type CallbackQuarantinedData = t.TypeOf<typeof V1>
export type CallbackQuarantined = DomainEventOf<'CallbackQuarantined', CallbackQuarantinedData>

/** Where a callback came from, as a quarantine stream names it. */
export type QuarantineSource = 'notification' | 'redirect'

/** `quarantine-<source>-<YYYY-MM-DD>`, the day in Asia/Bangkok. */
export const quarantineStreamName = (source: QuarantineSource, receivedAt: Date): string => `quarantine-${source}-${formatCalendarDate(bangkokDateOf(receivedAt))}`

const QUARANTINE_STREAM = /^quarantine-(notification|redirect)-(\d{4}-\d{2}-\d{2})$/

export const parseQuarantineStreamName = (stream: string): { readonly source: QuarantineSource; readonly day: string } | null => {
  const m = QUARANTINE_STREAM.exec(stream)
  if (m === null || m[2] === undefined) return null
  return { source: m[1] === 'redirect' ? 'redirect' : 'notification', day: m[2] }
}

/** One event per fingerprint and stream: a replayed forgery is the event already kept. */
export const quarantineNaturalKey = (stream: string, fingerprint: string): string => keyOf(stream, 'CallbackQuarantined', fingerprint)

/** What is kept of one string of a quarantined payload, at most. */
export const QUARANTINED_TEXT_LIMIT = 512

const clip = (s: string): string => {
  const escaped = escapeRefusedCharacters(s)
  return escaped.length <= QUARANTINED_TEXT_LIMIT ? escaped : `${escaped.slice(0, QUARANTINED_TEXT_LIMIT)}…[${String(escaped.length - QUARANTINED_TEXT_LIMIT)} more]`
}

const clipped = (u: unknown, depth: number): unknown => {
  if (typeof u === 'string') return clip(u)
  if (depth > 8) return '…[nested too deep]'
  if (Array.isArray(u)) return u.slice(0, 64).map((v: unknown) => clipped(v, depth + 1))
  if (typeof u === 'object' && u !== null) return Object.fromEntries(Object.entries(u).slice(0, 128).map(([k, v]: [string, unknown]) => [clip(k), clipped(v, depth + 1)]))
  return u
}

const claimed = (fields: Readonly<Record<string, unknown>> | null, key: string): string | null => {
  const v = fields?.[key]
  return typeof v === 'string' && v !== '' ? clip(v) : null
}

/** A callback that was not trusted, as the application saw it. Pure: redaction and clipping happen here. */
export type Quarantine = {
  readonly callback: CallbackKind
  readonly reason: QuarantineReason
  readonly detail: string
  readonly violations: ReadonlyArray<Violation>
  readonly fingerprint: string
  readonly signatureVerified: boolean
  readonly receivedAt: Date
  readonly fields: Readonly<Record<string, unknown>> | null
}

export const quarantineCallback = (q: Quarantine): CallbackQuarantined => {
  const fields = q.fields === null ? null : escapeRefusedFields(q.fields)
  const payload = fields === null ? null : clipped(fields, 0)
  return callbackQuarantined.make({
    callback: q.callback,
    reason: q.reason,
    detail: clip(q.detail),
    violations: q.violations.slice(0, 64).map((v) => ({ path: clip(v.path), rule: clip(v.rule) })),
    fingerprint: q.fingerprint,
    signatureVerified: q.signatureVerified,
    claimed: {
      merchantId: claimed(q.fields, 'merchant_id'),
      merchantOrderId: claimed(q.fields, 'merchant_order_id'),
      merchantRefundId: claimed(q.fields, 'merchant_refund_id'),
      merchantSubscribeId: claimed(q.fields, 'merchant_subscribe_id'),
    },
    receivedAt: q.receivedAt,
    payload: t.UnknownRecord.is(payload) ? redactPayerData(payload) : null,
  })
}
