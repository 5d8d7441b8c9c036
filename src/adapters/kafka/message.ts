import type { RecordedEvent } from '../../application/ports/event-store.ts'

/**
 * One stored event as a Kafka message: CloudEvents 1.0 in binary content mode (the Kafka protocol
 * binding): the attributes travel as `ce_*` headers, `datacontenttype` as `content-type`, and the
 * value is the event's data as JSON, exactly as stored (payer data is redacted before anything is
 * stored). The mapping is written here rather than taken from the `cloudevents` SDK (docs/kafka.md
 * "For operators: the relay" says why); the tests read our messages back with the SDK's Kafka binding.
 *
 * The public contract (docs/kafka.md "For consumers: the message contract", `schemas/`):
 * - key: the stream name, so one stream's events go to one partition, in order;
 * - `ce_specversion` `1.0`; `ce_id` the event id (dedupe on it); `ce_source` the configured source;
 *   `ce_type` `satang.<EventType>.v<schema version>`; `ce_subject` the stream name; `ce_time` when
 *   the event was committed to the log (RFC 3339, UTC); `content-type` `application/json`;
 * - extensions: `ce_satangposition` (the global log position, opaque but ordered as byte strings),
 *   `ce_streamrevision` (0, 1, 2, … within the stream), `ce_correlationid`, `ce_causationid`, and
 *   `ce_traceparent` (the CloudEvents distributed-tracing extension: the W3C traceparent of the request
 *   that caused the event) when the event's metadata holds one (satang traced it).
 */

/** The `ce_type` prefix of every satang event. */
export const CE_TYPE_PREFIX = 'satang.'

/** `ce_type` of an event type at a schema version: `satang.OrderCreated.v1`. */
export const ceTypeOf = (type: string, schemaVersion: number): string => `${CE_TYPE_PREFIX}${type}.v${String(schemaVersion)}`

/** The event type and schema version a `ce_type` names (`ceTypeOf` read back); undefined when it is not of that form. */
export const typeOfCeType = (ceType: string): { readonly type: string; readonly schemaVersion: number } | undefined => {
  if (!ceType.startsWith(CE_TYPE_PREFIX)) return undefined
  const at = ceType.lastIndexOf('.v')
  const digits = ceType.slice(at + 2)
  const schemaVersion = Number(digits)
  if (at <= CE_TYPE_PREFIX.length || !/^\d+$/.test(digits) || !Number.isSafeInteger(schemaVersion)) return undefined
  return { type: ceType.slice(CE_TYPE_PREFIX.length, at), schemaVersion }
}

/** The headers of every message, by name (docs/kafka.md's table and `schemas/headers.schema.json` list the same). */
export const HEADERS = {
  contentType: 'content-type',
  specversion: 'ce_specversion',
  id: 'ce_id',
  source: 'ce_source',
  type: 'ce_type',
  subject: 'ce_subject',
  time: 'ce_time',
  position: 'ce_satangposition',
  streamRevision: 'ce_streamrevision',
  correlationId: 'ce_correlationid',
  causationId: 'ce_causationid',
  traceparent: 'ce_traceparent',
} as const

export const CONTENT_TYPE = 'application/json'

/** A message as kafkajs sends it. */
export type OutgoingMessage = {
  readonly key: string
  readonly value: string
  readonly headers: Readonly<Record<string, string>>
  /** Epoch milliseconds as text: the commit time (`ce_time`). */
  readonly timestamp: string
  /** Bytes of key, value and headers, to cut produce requests below the broker's size limit. */
  readonly bytes: number
}

/** A W3C traceparent of version 00: what `ce_traceparent` may carry (anything else in the metadata is left out). */
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/

const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v))

/**
 * Each header of one stored event's message, name and value, in the order they are sent. `isoTime`
 * gives the commit time's text (`Date.toISOString`, or the same text kept from the previous event).
 */
export const eachHeader = (e: RecordedEvent, source: string, put: (name: string, value: string) => void, isoTime: (d: Date) => string = (d) => d.toISOString()): void => {
  put(HEADERS.contentType, CONTENT_TYPE)
  put(HEADERS.specversion, '1.0')
  put(HEADERS.id, e.eventId)
  put(HEADERS.source, source)
  put(HEADERS.type, ceTypeOf(e.type, e.schemaVersion))
  put(HEADERS.subject, e.streamName)
  put(HEADERS.time, isoTime(e.recordedAt))
  put(HEADERS.position, e.position)
  put(HEADERS.streamRevision, e.streamRevision.toString())
  put(HEADERS.correlationId, text(e.metadata.correlationId))
  put(HEADERS.causationId, text(e.metadata.causationId))
  const traceparent = e.metadata['traceparent']
  if (typeof traceparent === 'string' && TRACEPARENT.test(traceparent)) put(HEADERS.traceparent, traceparent)
}

/** The headers of one stored event's message, in the order they are sent. */
export const headersOf = (e: RecordedEvent, source: string): Record<string, string> => {
  const headers: Record<string, string> = {}
  eachHeader(e, source, (name, value) => {
    headers[name] = value
  })
  return headers
}

/** The message of one stored event. */
export const toKafkaMessage = (e: RecordedEvent, source: string): OutgoingMessage => {
  const headers = headersOf(e, source)
  const key = e.streamName
  const value = JSON.stringify(e.data)
  let bytes = Buffer.byteLength(key) + Buffer.byteLength(value)
  for (const [name, v] of Object.entries(headers)) bytes += name.length + Buffer.byteLength(v)
  return { key, value, headers, timestamp: String(e.recordedAt.getTime()), bytes }
}
