import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { EventMetadata, EventToAppend, InvalidAppend, JsonObject, Position, ReadItem } from '../../application/ports/event-store.ts'
import { escapeRefusedCharacters, isCleanText } from '../../domain/gateway/text-rules.ts'
import { violationsOf } from '../../domain/violations.ts'
import { isUuid } from '../../application/event-id.ts'

/** Metadata keys the stores keep for themselves (ESDB's system projections use `$correlationId`, `$causationId`). */
export const isReservedMetadataKey = (key: string): boolean => key === 'schemaVersion' || key.startsWith('$')

const REQUIRED_METADATA = ['correlationId', 'causationId', 'recordedAt', 'source'] as const

const isPlainObject = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === 'object' && u !== null && !Array.isArray(u)

// Stored payloads come out of JSON.parse (or jsonb), so they are JSON by construction: a shallow check suffices.
const isJsonObject = (u: unknown): u is JsonObject => isPlainObject(u)

const isEventMetadata = (u: unknown): u is EventMetadata => isJsonObject(u) && REQUIRED_METADATA.every((key) => typeof u[key] === 'string')

const invalid = (stream: string, reason: string): E.Either<InvalidAppend, never> => E.left({ _tag: 'InvalidAppend', stream, reason })

const eventRule = (e: EventToAppend): string | undefined => {
  if (!isUuid(e.eventId)) return `event id ${JSON.stringify(e.eventId)} must be a lowercase canonical UUID`
  if (typeof e.type !== 'string' || e.type === '' || e.type.startsWith('$')) return `event ${e.eventId}: type must be a non-empty string not starting with $`
  if (!Number.isSafeInteger(e.schemaVersion) || e.schemaVersion < 1) return `event ${e.eventId}: schemaVersion must be a positive integer`
  if (!isPlainObject(e.data)) return `event ${e.eventId}: data must be a JSON object`
  if (!isPlainObject(e.metadata)) return `event ${e.eventId}: metadata must be an object`
  for (const key of REQUIRED_METADATA) {
    if (typeof e.metadata[key] !== 'string') return `event ${e.eventId}: metadata.${key} must be a string`
  }
  const reserved = Object.keys(e.metadata).find(isReservedMetadataKey)
  if (reserved !== undefined) return `event ${e.eventId}: metadata key ${reserved} is reserved`
  return undefined
}

/** Rejects what no store should accept, before any IO. */
export const validateAppend = (stream: string, events: ReadonlyArray<EventToAppend>): E.Either<InvalidAppend, void> => {
  if (typeof stream !== 'string' || stream === '' || stream.startsWith('$')) return invalid(String(stream), 'stream name must be non-empty and not start with $')
  // PostgreSQL refuses NUL in text and would store a lone surrogate as U+FFFD: another stream's name.
  if (!isCleanText(stream)) return invalid(escapeRefusedCharacters(stream), 'stream name must not contain control characters or lone surrogates')
  if (events.length === 0) return invalid(stream, 'a batch needs at least one event')
  const seen = new Set<string>()
  for (const e of events) {
    const rule = eventRule(e)
    if (rule !== undefined) return invalid(stream, rule)
    if (seen.has(e.eventId)) return invalid(stream, `event id ${e.eventId} appears twice in the batch`)
    seen.add(e.eventId)
  }
  return E.right(undefined)
}

/** Stored metadata: the four required fields are strings; other keys are free-form JSON. */
export const StoredMetadata = t.type(
  { correlationId: t.string, causationId: t.string, recordedAt: t.string, source: t.string },
  'EventMetadata',
)

/** The parts of a stored event as an adapter read them, before the envelope is decoded. */
export type RawEvent = {
  readonly streamName: string
  readonly streamRevision: bigint
  readonly position: Position
  readonly eventId: string
  readonly type: string
  readonly schemaVersion: unknown
  readonly data: unknown
  readonly metadata: unknown
  readonly recordedAt: Date
}

/** Decodes the envelope of a stored event, or reports it with its stream and position. */
export const decodeEvent = (raw: RawEvent): ReadItem => {
  const undecodable = (reason: string): ReadItem =>
    E.left({ _tag: 'UndecodableEvent', stream: raw.streamName, position: raw.position, streamRevision: raw.streamRevision, eventId: raw.eventId, reason })
  if (typeof raw.schemaVersion !== 'number' || !Number.isSafeInteger(raw.schemaVersion) || raw.schemaVersion < 1) {
    return undecodable('schemaVersion: must be a positive integer')
  }
  if (!isJsonObject(raw.data)) return undecodable('data: must be a JSON object')
  const m = raw.metadata
  // The common case is checked by hand (this runs for every event read); the codec explains failures.
  if (!isEventMetadata(m)) {
    if (!isJsonObject(m)) return undecodable('metadata: must be a JSON object')
    const decoded = StoredMetadata.decode(m)
    return undecodable(E.isLeft(decoded) ? violationsOf(decoded.left).map((v) => `metadata.${v.path}: ${v.rule}`).join('; ') : 'metadata: invalid')
  }
  return E.right({
    eventId: raw.eventId,
    type: raw.type,
    schemaVersion: raw.schemaVersion,
    data: raw.data,
    metadata: m,
    streamName: raw.streamName,
    streamRevision: raw.streamRevision,
    position: raw.position,
    recordedAt: raw.recordedAt,
  })
}

/** Left-pads an unsigned decimal to 20 digits (the width of a uint64), so positions compare as strings. */
export const pad20 = (digits: string): string => digits.padStart(20, '0')

/** Waits `ms`, or less when `interrupt` is handed a wake function and calls it (a subscriber woken by new events or by stop). */
export const sleep = (ms: number, interrupt?: (wake: () => void) => void): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    interrupt?.(() => {
      clearTimeout(timer)
      resolve()
    })
  })
