import { CloudEvent, Kafka as CloudEventsKafka } from 'cloudevents'
import type { RecordedEvent } from '../../application/ports/event-store.ts'

/**
 * One stored event as a Kafka message: CloudEvents 1.0 in binary content mode (the Kafka protocol
 * binding): the attributes travel as `ce_*` headers, the value is the event's data as JSON, exactly
 * as stored (payer data is redacted before anything is stored). The `cloudevents` SDK builds the
 * event (it validates every attribute against the CloudEvents spec) and maps it to the message,
 * including the partitioning extension `partitionkey` → message key.
 *
 * The public contract (README "Kafka: the event stream for downstream systems", `schemas/`):
 * - key: the stream name, so one stream's events go to one partition, in order;
 * - `ce_specversion` `1.0`; `ce_id` the event id (dedupe on it); `ce_source` the configured source;
 *   `ce_type` `satang.<EventType>.v<schema version>`; `ce_subject` the stream name; `ce_time` when
 *   the event was committed to the log (RFC 3339, UTC); `content-type` and `ce_datacontenttype`
 *   `application/json`;
 * - extensions: `ce_satangposition` (the global log position, opaque but ordered as byte strings),
 *   `ce_streamrevision` (0, 1, 2, … within the stream), `ce_correlationid`, `ce_causationid`,
 *   `ce_partitionkey` (= the key).
 */

/** The `ce_type` prefix of every satang event. */
export const CE_TYPE_PREFIX = 'satang.'

/** `ce_type` of an event type at a schema version: `satang.OrderCreated.v1`. */
export const ceTypeOf = (type: string, schemaVersion: number): string => `${CE_TYPE_PREFIX}${type}.v${String(schemaVersion)}`

/** The headers of every message, by name (the README's table and `schemas/headers.schema.json` list the same). */
export const HEADERS = {
  contentType: 'content-type',
  specversion: 'ce_specversion',
  id: 'ce_id',
  source: 'ce_source',
  type: 'ce_type',
  subject: 'ce_subject',
  time: 'ce_time',
  datacontenttype: 'ce_datacontenttype',
  position: 'ce_satangposition',
  streamRevision: 'ce_streamrevision',
  correlationId: 'ce_correlationid',
  causationId: 'ce_causationid',
  partitionKey: 'ce_partitionkey',
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

const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v))

/** The message of one stored event. Throws only on a defect (an attribute the CloudEvents spec refuses). */
export const toKafkaMessage = (e: RecordedEvent, source: string): OutgoingMessage => {
  const event = new CloudEvent<string>({
    specversion: '1.0',
    id: e.eventId,
    source,
    type: ceTypeOf(e.type, e.schemaVersion),
    subject: e.streamName,
    time: e.recordedAt.toISOString(),
    datacontenttype: CONTENT_TYPE,
    data: JSON.stringify(e.data),
    satangposition: e.position,
    streamrevision: e.streamRevision.toString(),
    correlationid: text(e.metadata.correlationId),
    causationid: text(e.metadata.causationId),
    partitionkey: e.streamName,
  })
  const message = CloudEventsKafka.binary(event)
  const headers: Record<string, string> = {}
  let bytes = 0
  for (const [name, value] of Object.entries(message.headers)) {
    if (value === undefined) continue
    const v = text(value)
    headers[name] = v
    bytes += name.length + Buffer.byteLength(v)
  }
  const value = text(message.value)
  const key = e.streamName
  bytes += Buffer.byteLength(key) + Buffer.byteLength(value)
  return { key, value, headers, timestamp: String(e.recordedAt.getTime()), bytes }
}
