import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import * as t from 'io-ts'
import { isRetriablePgError, sqlStateOf } from '../adapters/postgres/errors.ts'
import type { EventMetadata, EventStore, EventStoreFailure, Json, JsonObject, Position, ReadItem, RecordedEvent } from '../domain/event-store.ts'
import { AUDIT_LOG } from '../projections/audit-log.ts'
import { qualified, type ReadModels } from '../projections/types.ts'

/**
 * The audit trail of one stream: every event as it was stored, in stream order, with where it came
 * from and whether its signature verified. Payloads are shown as stored (the schema version says which
 * shape), never upcast: an auditor sees exactly what was recorded. Payer personal data was redacted
 * before it was stored (see the README on PDPA).
 */
export type AuditEntry = {
  readonly stream_revision: number
  /** Position in the global log (opaque; orders the log). */
  readonly position: string
  readonly event_id: string
  readonly type: string
  readonly schema_version: number
  /** `api_request`, `api_response`, `redirect`, `notification`, `query`, `operator`, `reconciliation`. */
  readonly source: string
  /** When the store committed the event. */
  readonly recorded_at: string
  /** When satang recorded the fact (the command's clock). */
  readonly occurred_at: string
  readonly correlation_id: string
  readonly causation_id: string
  readonly trace_id: Json
  /** For callbacks: whether the gateway signature verified (and why not); `null` for anything else. */
  readonly signature: Json
  /** The remaining metadata keys (actor, …). */
  readonly metadata: JsonObject
  readonly data: JsonObject
}

/** A stored event whose envelope cannot be decoded: shown where it sits, never hidden. */
export type AuditUndecodable = {
  readonly stream_revision: number
  readonly position: string
  readonly event_id: string
  readonly undecodable: string
}

export type AuditTrail = {
  readonly stream: string
  readonly events: ReadonlyArray<AuditEntry | AuditUndecodable>
}

const KNOWN_METADATA = new Set(['correlationId', 'causationId', 'recordedAt', 'source', 'traceId', 'signature'])

const rest = (m: JsonObject): JsonObject => Object.fromEntries(Object.entries(m).filter(([k]) => !KNOWN_METADATA.has(k)))

const entryOfRecorded = (e: RecordedEvent): AuditEntry => ({
  stream_revision: Number(e.streamRevision),
  position: e.position,
  event_id: e.eventId,
  type: e.type,
  schema_version: e.schemaVersion,
  source: e.metadata.source,
  recorded_at: e.recordedAt.toISOString(),
  occurred_at: e.metadata.recordedAt,
  correlation_id: e.metadata.correlationId,
  causation_id: e.metadata.causationId,
  trace_id: e.metadata['traceId'] ?? null,
  signature: e.metadata['signature'] ?? null,
  metadata: rest(e.metadata),
  data: e.data,
})

const entryOf = (item: ReadItem): AuditEntry | AuditUndecodable => {
  if (E.isRight(item)) return entryOfRecorded(item.right)
  const u = item.left
  return { stream_revision: Number(u.streamRevision), position: u.position, event_id: u.eventId, undecodable: u.reason }
}

/** Reads one stream whole; `right(undefined)` when it does not exist. */
export const auditTrail =
  (store: EventStore, stream: string): TE.TaskEither<EventStoreFailure, AuditTrail | undefined> =>
  async () => {
    const read = await store.readStream(stream)()
    if (E.isLeft(read)) return read
    if (read.right.length === 0) return E.right(undefined)
    return E.right({ stream, events: read.right.map(entryOf) })
  }

// A row of `audit_log` as the trail reads it: the stored envelope, recorded_at as epoch milliseconds
// (the store's precision, so the trail is the same whichever source served it).
const AuditLogRow = t.type({
  stream_revision: t.string,
  global_position: t.string,
  event_id: t.string,
  type: t.string,
  schema_version: t.number,
  recorded_at_ms: t.string,
  payload: t.UnknownRecord,
  metadata: t.UnknownRecord,
})
const AuditLogRows = t.array(AuditLogRow)

const isEventMetadata = (m: Readonly<Record<string, unknown>>): m is EventMetadata =>
  typeof m['correlationId'] === 'string' && typeof m['causationId'] === 'string' && typeof m['recordedAt'] === 'string' && typeof m['source'] === 'string'

const entryOfRow = (stream: string, row: t.TypeOf<typeof AuditLogRow>): AuditEntry => {
  const m = row.metadata
  if (!isEventMetadata(m)) throw new Error(`audit_log: event ${row.event_id} has no valid metadata`)
  return entryOfRecorded({
    eventId: row.event_id,
    type: row.type,
    schemaVersion: row.schema_version,
    // jsonb read back by pg is JSON by construction
    data: row.payload as JsonObject,
    metadata: m,
    streamName: stream,
    streamRevision: BigInt(row.stream_revision),
    position: row.global_position as Position,
    recordedAt: new Date(Number(row.recorded_at_ms)),
  })
}

const readModelFailure = (cause: unknown): EventStoreFailure => ({ _tag: 'EventStoreFailure', operation: 'readAuditLog', retriable: isRetriablePgError(cause), cause })

/**
 * The audit trail of one stream served from the `audit_log` read model, completed with the stream's
 * newer events read from the event store (from the revision after the last projected one): a
 * projection that lags never hides an event. Falls back to the store alone when the read model is
 * missing (not migrated yet) or holds anything but a gap-free start of the stream. Same result as
 * `auditTrail`.
 */
export const auditTrailFromReadModel =
  (readModels: ReadModels, store: EventStore, stream: string): TE.TaskEither<EventStoreFailure, AuditTrail | undefined> =>
  async () => {
    let rows: t.TypeOf<typeof AuditLogRows>
    try {
      const r = await readModels.pool.query(
        `select stream_revision::text, global_position, event_id::text, type, schema_version,
                (extract(epoch from recorded_at) * 1000)::bigint::text as recorded_at_ms, payload, metadata
           from ${qualified(readModels.schema, AUDIT_LOG)} where stream_name = $1 order by stream_revision`,
        [stream],
      )
      const decoded = AuditLogRows.decode(r.rows)
      if (E.isLeft(decoded)) throw new Error(`audit_log: unexpected rows for ${stream}`)
      rows = decoded.right
    } catch (cause) {
      // 42P01: no audit_log table (read models not migrated): the store still answers.
      if (sqlStateOf(cause) === '42P01') return auditTrail(store, stream)()
      return E.left(readModelFailure(cause))
    }
    if (rows.some((row, i) => row.stream_revision !== String(i))) return auditTrail(store, stream)()
    let projected: ReadonlyArray<AuditEntry>
    try {
      projected = rows.map((row) => entryOfRow(stream, row))
    } catch (cause) {
      return E.left(readModelFailure(cause))
    }
    const newer = await store.readStream(stream, { fromRevision: BigInt(rows.length) })()
    if (E.isLeft(newer)) return newer
    const events = [...projected, ...newer.right.map(entryOf)]
    return E.right(events.length === 0 ? undefined : { stream, events })
  }

/** The audit trail from the read model when there is one, else from the store. */
export const readAuditTrail = (deps: { readonly store: EventStore; readonly readModels?: ReadModels | undefined }, stream: string): TE.TaskEither<EventStoreFailure, AuditTrail | undefined> =>
  deps.readModels === undefined ? auditTrail(deps.store, stream) : auditTrailFromReadModel(deps.readModels, deps.store, stream)
