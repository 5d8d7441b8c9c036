import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { EventMetadata } from './envelope.ts'
import { oneOf } from '../gateway/text-codecs.ts'
import { Instant } from './codecs.ts'

/** What brought a fact to satang (ARCHITECTURE.md, issue 5). */
export const EventSource = oneOf('EventSource', ['api_request', 'api_response', 'redirect', 'notification', 'query', 'operator', 'reconciliation'])
export type EventSource = t.TypeOf<typeof EventSource>

/** The outcome of verifying a callback's `sign`. */
export const SignatureResult = t.intersection([t.type({ verified: t.boolean }), t.partial({ reason: t.string })], 'SignatureResult')
export type SignatureResult = t.TypeOf<typeof SignatureResult>

/** `recordedAt`: ISO-8601 UTC text, as the event store port carries it. */
const IsoInstantText = new t.Type<string, string, unknown>(
  'IsoInstantText',
  (u): u is string => typeof u === 'string' && Instant.is(new Date(u)),
  (u, c) => {
    const decoded = Instant.validate(u, c)
    return E.isRight(decoded) && typeof u === 'string' ? t.success(u) : t.failure(u, c, 'must be an ISO-8601 UTC instant such as 2026-01-01T03:00:00.000Z')
  },
  t.identity,
)

/**
 * Metadata of every domain event: who caused it (correlation and causation ids), where it came from,
 * when the application recorded it, the gateway's `trace_id` when one is known, for callbacks the
 * signature result, and, while satang traces, the W3C `traceparent` of the request that caused it
 * (absent from events stored before, or without tracing). Other keys of stored metadata are kept by the store and ignored here.
 */
export const DomainEventMetadata = t.intersection(
  [
    t.type({ correlationId: t.string, causationId: t.string, recordedAt: IsoInstantText, source: EventSource }),
    t.partial({ traceId: t.string, signature: SignatureResult, traceparent: t.string }),
  ],
  'DomainEventMetadata',
)
export type DomainEventMetadata = t.TypeOf<typeof DomainEventMetadata>

/** The metadata as the event store port takes it (optional members that are absent are left out). */
export const toStoreMetadata = (m: DomainEventMetadata): EventMetadata => ({
  correlationId: m.correlationId,
  causationId: m.causationId,
  recordedAt: m.recordedAt,
  source: m.source,
  ...(m.traceId === undefined ? {} : { traceId: m.traceId }),
  ...(m.traceparent === undefined ? {} : { traceparent: m.traceparent }),
  ...(m.signature === undefined
    ? {}
    : { signature: m.signature.reason === undefined ? { verified: m.signature.verified } : { verified: m.signature.verified, reason: m.signature.reason } }),
})
