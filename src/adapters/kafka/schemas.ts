import type * as t from 'io-ts'
import { CalendarDateText } from '../../domain/bangkok-time.ts'
import { BangkokWallTime, Count, Instant, Integer, PositiveInt, SatangAmount } from '../../domain/events/codecs.ts'
import { JsonObjectCodec } from '../../domain/events/json.ts'
import { SatangSum } from '../../domain/reconciliation/events/values.ts'
import { DOMAIN_EVENT_TYPES, eventDefinitions } from '../../domain/events/registry.ts'
import { jsonSchemaOf, type JsonSchema, type LeafSchemas } from '../json-schema.ts'
import { CONTENT_TYPE, ceTypeOf, HEADERS } from './message.ts'

/**
 * The published JSON Schemas (`schemas/` in the repository, written by `npm run schemas`): one per
 * event type and schema version, describing the message value, generated from the very io-ts codec
 * that decodes that version; and one for the headers. A test regenerates them and compares them with
 * the committed files, so they cannot drift from the code.
 */

const DRAFT = 'http://json-schema.org/draft-07/schema#'

/** The custom codecs events use, and what their JSON looks like. */
export const LEAF_SCHEMAS: LeafSchemas = new Map<unknown, JsonSchema>([
  [Instant, { type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,3})?Z$', description: 'an instant, ISO-8601 in UTC' }],
  [BangkokWallTime, { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$', description: 'yyyy-MM-dd HH:mm:ss, wall-clock time in Asia/Bangkok (UTC+7), as the gateway writes times' }],
  [CalendarDateText, { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'a calendar date yyyy-MM-dd (Asia/Bangkok)' }],
  [SatangAmount, { type: 'string', pattern: '^(0|[1-9]\\d{0,17})$', description: 'an amount in satang (1/100 baht) as a digit string: "42000" is 420.00 THB' }],
  [SatangSum, { type: 'string', pattern: '^(0|[1-9]\\d{0,24})$', description: 'a sum of satang (totals, amounts at stake) as a digit string' }],
  [PositiveInt, { type: 'integer', minimum: 1 }],
  [Count, { type: 'integer', minimum: 0 }],
  [Integer, { type: 'integer' }],
  [JsonObjectCodec, { type: 'object', description: 'a JSON object as received; payer personal data replaced by {"redacted": true}' }],
])

/** The file name of the schema of `type` at `version`. */
export const eventSchemaFile = (type: string, version: number): string => `${type}.v${String(version)}.schema.json`

export const HEADERS_SCHEMA_FILE = 'headers.schema.json'

/** Every event type and the versions a consumer may receive. */
export const publishedVersions = (): ReadonlyArray<{ readonly type: string; readonly version: number; readonly codec: t.Type<unknown, unknown, unknown> }> =>
  DOMAIN_EVENT_TYPES.flatMap((type) =>
    eventDefinitions[type].knownVersions.map((version) => {
      const codec = eventDefinitions[type].codecOf(version)
      if (codec === undefined) throw new Error(`${type}: no codec for known version ${String(version)}`)
      return { type, version, codec }
    }),
  )

const eventSchema = (type: string, version: number, codec: t.Mixed): JsonSchema => ({
  $schema: DRAFT,
  $id: eventSchemaFile(type, version),
  title: `${type} v${String(version)}`,
  description: `The value (JSON) of a message whose ce_type is ${ceTypeOf(type, version)}. Generated from the codec of the event; do not edit.`,
  ...jsonSchemaOf(codec, LEAF_SCHEMAS, `${type}.v${String(version)}`),
})

const headersSchema = (): JsonSchema => {
  const text = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra })
  const properties: Record<string, JsonSchema> = {
    [HEADERS.contentType]: text('media type of the value: the CloudEvents datacontenttype attribute', { const: CONTENT_TYPE }),
    [HEADERS.specversion]: text('CloudEvents version', { const: '1.0' }),
    [HEADERS.id]: text('the event id (a UUID): the same event published again carries the same id; deduplicate on it', {
      pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
    }),
    [HEADERS.source]: text('the satang installation (SATANG_KAFKA_SOURCE)', { minLength: 1 }),
    [HEADERS.type]: text('satang.<EventType>.v<schema version>; the value validates against <EventType>.v<version>.schema.json', {
      enum: publishedVersions().map((v) => ceTypeOf(v.type, v.version)),
    }),
    [HEADERS.subject]: text('the stream the event belongs to (= the message key)', { minLength: 1 }),
    [HEADERS.time]: text('when the event was committed to the log, RFC 3339 in UTC', { format: 'date-time' }),
    [HEADERS.position]: text("the event's position in satang's global log: opaque; within one store, positions compare as byte strings in log order", { minLength: 1 }),
    [HEADERS.streamRevision]: text('0 for the first event of the stream, then 1, 2, … with no gaps', { pattern: '^(0|[1-9][0-9]*)$' }),
    [HEADERS.correlationId]: text('the request or job that caused this event and others'),
    [HEADERS.causationId]: text('what caused this event directly (a command, a callback, another event)'),
  }
  // Optional: present when satang traced the request that caused the event (OpenTelemetry on).
  const optional: Record<string, JsonSchema> = {
    [HEADERS.traceparent]: text('the CloudEvents distributed-tracing extension: the W3C traceparent of the request that caused this event; present only when satang traced it', {
      pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
    }),
  }
  return {
    $schema: DRAFT,
    $id: HEADERS_SCHEMA_FILE,
    title: 'satang Kafka message headers',
    description: 'CloudEvents 1.0, Kafka protocol binding, binary content mode: every header of every message (UTF-8 text). Consumers should ignore headers they do not know. Generated; do not edit.',
    type: 'object',
    properties: { ...properties, ...optional },
    required: Object.keys(properties),
    additionalProperties: { type: 'string' },
  }
}

/** Every published schema document, by file name (sorted). */
export const publishedSchemas = (): ReadonlyMap<string, JsonSchema> =>
  new Map(
    [
      [HEADERS_SCHEMA_FILE, headersSchema()] as const,
      ...publishedVersions().map((v) => [eventSchemaFile(v.type, v.version), eventSchema(v.type, v.version, v.codec)] as const),
    ].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  )

/** A schema file's text: 2-space JSON and a final newline. */
export const schemaText = (schema: JsonSchema): string => `${JSON.stringify(schema, null, 2)}\n`
