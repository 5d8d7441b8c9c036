import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { EventStore, EventStoreFailure, Json, JsonObject, Position, ReadError, ReadItem, RecordedEvent } from './ports/event-store.ts'
import type { QuarantineClaim, ReadModelQueries } from './ports/read-models.ts'

/**
 * The audit trail of one stream: every event as it was stored, in stream order, with where it came
 * from and whether its signature verified. Payloads are shown as stored (the schema version says which
 * shape), never upcast: an auditor sees exactly what was recorded. Payer personal data was redacted
 * before it was stored (see docs/audit.md "Payer personal data (PDPA)").
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

/**
 * The audit trail of one stream served from the audit log read model, completed with the stream's
 * newer events read from the event store (from the revision after the last projected one): a
 * projection that lags never hides an event. Falls back to the store alone when the read model is
 * missing (not migrated yet) or holds anything but a gap-free start of the stream. Same result as
 * `auditTrail`.
 */
export const auditTrailFromReadModel =
  (readModels: ReadModelQueries, store: EventStore, stream: string): TE.TaskEither<EventStoreFailure, AuditTrail | undefined> =>
  async () => {
    const kept = await readModels.auditEvents(stream)()
    if (E.isLeft(kept)) {
      if (kept.left.missing) return auditTrail(store, stream)()
      return E.left({ _tag: 'EventStoreFailure', operation: `readModels.${kept.left.operation}`, retriable: kept.left.retriable, cause: kept.left.cause })
    }
    const rows = kept.right
    if (rows.some((row, i) => row.streamRevision !== BigInt(i))) return auditTrail(store, stream)()
    const newer = await store.readStream(stream, { fromRevision: BigInt(rows.length) })()
    if (E.isLeft(newer)) return newer
    const events = [...rows.map(entryOfRecorded), ...newer.right.map(entryOf)]
    return E.right(events.length === 0 ? undefined : { stream, events })
  }

/** The audit trail from the read model when there is one, else from the store. */
export const readAuditTrail = (deps: { readonly store: EventStore; readonly readModels?: ReadModelQueries | undefined }, stream: string): TE.TaskEither<EventStoreFailure, AuditTrail | undefined> =>
  deps.readModels === undefined ? auditTrail(deps.store, stream) : auditTrailFromReadModel(deps.readModels, deps.store, stream)

export type { QuarantineClaim } from './ports/read-models.ts'

/** A quarantined callback as the audit shows it: its quarantine stream and the event as stored. */
export type QuarantinedEntry = AuditEntry & { readonly stream: string }

const CLAIM_KEYS: Readonly<Record<QuarantineClaim['kind'], string>> = { order: 'merchantOrderId', refund: 'merchantRefundId', subscription: 'merchantSubscribeId' }

const names = (data: JsonObject, claim: QuarantineClaim): boolean => {
  const claimed = data['claimed']
  if (!t.UnknownRecord.is(claimed)) return false
  return claimed[CLAIM_KEYS[claim.kind]] === claim.id && (claimed['merchantId'] === claim.merchantId || claimed['merchantId'] === null)
}

const readFailure = (e: ReadError): EventStoreFailure => (e._tag === 'EventStoreFailure' ? e : { _tag: 'EventStoreFailure', operation: 'readCategory', retriable: false, cause: e })

/** The quarantined callbacks naming `claim` in the quarantine streams after `from` (the whole quarantine when absent), in log order. */
const scanQuarantine = async (store: EventStore, claim: QuarantineClaim, from: Position | undefined): Promise<E.Either<EventStoreFailure, ReadonlyArray<QuarantinedEntry>>> => {
  const found: QuarantinedEntry[] = []
  let after = from
  for (;;) {
    const page = await store.readCategory('quarantine-', { ...(after === undefined ? {} : { from: after }), maxCount: 1000 })()
    if (E.isLeft(page)) return E.left(readFailure(page.left))
    for (const item of page.right) if (E.isRight(item) && item.right.type === 'CallbackQuarantined' && names(item.right.data, claim)) found.push({ stream: item.right.streamName, ...entryOfRecorded(item.right) })
    const end = page.right[page.right.length - 1]
    if (end === undefined) return E.right(found)
    after = E.isRight(end) ? end.right.position : end.left.position
  }
}

/**
 * The quarantined callbacks (CallbackQuarantined, in the `quarantine-…` streams) that name an order,
 * refund or subscription: not part of its history, shown beside it for audit, each with its signature
 * result (a forgery is unverified). Read from the event store alone: every quarantine stream, in log
 * order (what `readQuarantinedNaming` falls back to when there is no audit log).
 */
export const quarantinedNaming =
  (store: EventStore, claim: QuarantineClaim): TE.TaskEither<EventStoreFailure, ReadonlyArray<QuarantinedEntry>> =>
  () =>
    scanQuarantine(store, claim, undefined)

/**
 * The quarantined callbacks naming `claim`, from the audit log's index of claimed ids up to its
 * checkpoint, completed with the quarantine events the log holds after it (what the projection has not
 * applied yet): the cost follows what names the claim and the projection's lag, never the size of the
 * quarantine. Falls back to the event store alone when the audit log does not exist (not migrated).
 */
export const readQuarantinedNaming = (
  deps: { readonly store: EventStore; readonly readModels?: ReadModelQueries | undefined },
  claim: QuarantineClaim,
): TE.TaskEither<EventStoreFailure, ReadonlyArray<QuarantinedEntry>> => {
  const { readModels, store } = deps
  if (readModels === undefined) return quarantinedNaming(store, claim)
  return async () => {
    const kept = await readModels.quarantinedNaming(claim)()
    if (E.isLeft(kept)) {
      if (kept.left.missing) return quarantinedNaming(store, claim)()
      return E.left({ _tag: 'EventStoreFailure', operation: `readModels.${kept.left.operation}`, retriable: kept.left.retriable, cause: kept.left.cause })
    }
    const newer = await scanQuarantine(store, claim, kept.right.checkpoint)
    if (E.isLeft(newer)) return newer
    const seen = new Set(kept.right.events.map((e) => e.eventId))
    return E.right([...kept.right.events.map((e) => ({ stream: e.streamName, ...entryOfRecorded(e) })), ...newer.right.filter((e) => !seen.has(e.event_id))])
  }
}
