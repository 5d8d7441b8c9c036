import * as t from 'io-ts'
import { bangkokDateOf, formatCalendarDate } from '../../bangkok-time.ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { escapeRefusedCharacters, escapeRefusedFields } from '../../gateway/text-rules.ts'
import type { Violation } from '../../violations.ts'
import { Count, Instant, nullable, ViolationCodec } from '../codecs.ts'
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
 * Version 1 kept `payload`: what could be parsed (payer data redacted, strings clipped at 512), or null.
 */
const common = {
  callback: CallbackKind,
  reason: QuarantineReason,
  detail: t.string,
  violations: t.array(ViolationCodec),
  fingerprint: t.string,
  signatureVerified: t.boolean,
  claimed: ClaimedIds,
  receivedAt: Instant,
}
const V1 = t.strict({ ...common, payload: nullable(RedactedPayload) }, 'CallbackQuarantinedV1')

/** What a quarantine stream holds of one callback kind, up to and including an event (the day's budget is checked against it). */
const DayTotal = t.strict({ callback: CallbackKind, events: Count, bytes: Count }, 'QuarantineDayTotal')
export type QuarantineDayTotal = t.TypeOf<typeof DayTotal>

/**
 * Version 2 keeps what an investigation needs, bounded: the body's SHA-256 and size, and its start
 * (`bodyHead`, at most SATANG_QUARANTINE_BODY_BYTES bytes of UTF-8: the fields as JSON with payer
 * data redacted when they could be read, else the text received; characters no text may hold as
 * `\uXXXX` escapes), instead of the whole payload. `dayTotals`: what the stream held of each callback
 * kind once this event was kept (events, and bytes of event data), so the day's budget is read from the
 * stream's last event, by every process. Version 1 reads as version 2 with the payload's JSON as
 * `bodyHead`, the body's hash and size unknown (null) and no totals.
 */
const V2 = t.strict(
  {
    ...common,
    bodySha256: nullable(t.string),
    bodyBytes: nullable(Count),
    bodyHead: nullable(t.string),
    dayTotals: t.array(DayTotal),
  },
  'CallbackQuarantinedV2',
)

export const callbackQuarantined = defineEvent(
  'CallbackQuarantined',
  { 1: V1, 2: V2 },
  {
    1: (d: t.TypeOf<typeof V1>): t.TypeOf<typeof V2> => {
      const { payload, ...rest } = d
      return { ...rest, bodySha256: null, bodyBytes: null, bodyHead: payload === null ? null : JSON.stringify(payload), dayTotals: [] }
    },
  },
)
export type CallbackQuarantinedData = t.TypeOf<typeof V2>
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

/** What is kept of one text of a quarantined callback (an id it claims, a violation's path), at most. */
export const QUARANTINED_TEXT_LIMIT = 128

const clip = (s: string, limit = QUARANTINED_TEXT_LIMIT): string => {
  const escaped = escapeRefusedCharacters(s)
  return escaped.length <= limit ? escaped : `${escaped.slice(0, limit)}…[${String(escaped.length - limit)} more]`
}

/** The violated rules kept, at most: enough to say which checks failed. */
const VIOLATIONS_KEPT = 32

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** The first `max` bytes of the UTF-8 of `s`, cut at a character boundary. */
export const utf8Head = (s: string, max: number): string => {
  const bytes = encoder.encode(s)
  if (bytes.length <= max) return s
  let end = max
  // Back off continuation bytes (10xxxxxx): the cut falls before the character they belong to.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--
  return decoder.decode(bytes.subarray(0, end))
}

const claimed = (fields: Readonly<Record<string, unknown>> | null, key: string): string | null => {
  const v = fields?.[key]
  return typeof v === 'string' && v !== '' ? clip(v) : null
}

/** What arrived of a quarantined callback: the SHA-256 and size of the whole body, and its text when its fields could not be read. */
export type QuarantinedBody = {
  readonly sha256: string
  readonly bytes: number
  /** The start of the body as text (the application decodes the first bytes); used when there are no fields. */
  readonly text: string
}

/** A callback that was not trusted, as the application saw it. Pure: redaction, escaping and cutting happen here. */
export type Quarantine = {
  readonly callback: CallbackKind
  readonly reason: QuarantineReason
  readonly detail: string
  readonly violations: ReadonlyArray<Violation>
  readonly fingerprint: string
  readonly signatureVerified: boolean
  readonly receivedAt: Date
  readonly fields: Readonly<Record<string, unknown>> | null
  readonly body: QuarantinedBody
  /** At most this many bytes of the body are kept (`SATANG_QUARANTINE_BODY_BYTES`). */
  readonly headBytes: number
}

/** The kept start of the body: the fields as JSON, payer data redacted, when there are fields; else the text received. */
const bodyHeadOf = (q: Quarantine): string | null => {
  const text = q.fields === null ? escapeRefusedCharacters(q.body.text) : JSON.stringify(redactPayerData(escapeRefusedFields(q.fields)))
  return text === '' ? null : utf8Head(text, q.headBytes)
}

/** The event of a quarantined callback, without its day totals (`withDayTotals` adds them once the stream's are known). */
export const quarantineCallback = (q: Quarantine): CallbackQuarantined => {
  const kept = q.violations.slice(0, VIOLATIONS_KEPT).map((v) => ({ path: clip(v.path), rule: clip(v.rule, 256) }))
  const more = q.violations.length - kept.length
  return callbackQuarantined.make({
    callback: q.callback,
    reason: q.reason,
    detail: clip(q.detail, 256),
    violations: more > 0 ? [...kept, { path: '', rule: `…and ${String(more)} more violations` }] : kept,
    fingerprint: q.fingerprint,
    signatureVerified: q.signatureVerified,
    claimed: {
      merchantId: claimed(q.fields, 'merchant_id'),
      merchantOrderId: claimed(q.fields, 'merchant_order_id'),
      merchantRefundId: claimed(q.fields, 'merchant_refund_id'),
      merchantSubscribeId: claimed(q.fields, 'merchant_subscribe_id'),
    },
    receivedAt: q.receivedAt,
    bodySha256: q.body.sha256,
    bodyBytes: q.body.bytes,
    bodyHead: bodyHeadOf(q),
    dayTotals: [],
  })
}

export const withDayTotals = (e: CallbackQuarantined, dayTotals: ReadonlyArray<QuarantineDayTotal>): CallbackQuarantined => callbackQuarantined.make({ ...e.data, dayTotals: [...dayTotals] })
