/**
 * The envelope of a domain event as the domain hands it to the store: JSON data, a type with a schema
 * version, an id and metadata. The event store port (src/application/ports/event-store.ts) adds where
 * it was stored.
 */

/** A JSON value, as events carry it. Amounts travel as digit strings, never as numbers. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | JsonObject
export type JsonObject = { readonly [key: string]: Json }

/**
 * Who caused an event and why. `recordedAt` is the instant the application recorded the fact (it
 * arrives on the command); the store adds its own commit time as `RecordedEvent.recordedAt`.
 * Extra keys are free-form JSON, except `schemaVersion` and keys starting with `$`, which are reserved.
 */
export type EventMetadata = {
  readonly correlationId: string
  readonly causationId: string
  readonly recordedAt: string
  readonly source: string
  readonly [extra: string]: Json
}

/** An event to append. `eventId` is a lowercase canonical UUID; derive it from a natural key (UUIDv5) when a redelivery must map to the same event. */
export type EventToAppend = {
  readonly eventId: string
  readonly type: string
  readonly schemaVersion: number
  readonly data: JsonObject
  readonly metadata: EventMetadata
}
