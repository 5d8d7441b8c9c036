import type { Pool, PoolClient } from 'pg'
import type { EventMetadata, JsonObject, Position, RecordedEvent } from '../application/ports/event-store.ts'
import type { DomainEvent } from '../domain/events/registry.ts'

/**
 * One event as a projection receives it: decoded to the newest shape of its type (`event`), with
 * where it sits in the log and the envelope as stored (`storedSchemaVersion`, `storedData`,
 * `metadata`) for read models that show the record exactly as kept (the audit log).
 */
export type ProjectedEvent = {
  readonly event: DomainEvent
  readonly eventId: string
  readonly streamName: string
  readonly streamRevision: bigint
  readonly position: Position
  /** The schema version the event was stored at (`event` is upcast to the newest). */
  readonly storedSchemaVersion: number
  /** The payload exactly as stored. */
  readonly storedData: JsonObject
  readonly metadata: EventMetadata
  /** When the store committed the event (UTC). */
  readonly recordedAt: Date
}

/** Where a projection writes: a transaction is open on `client`; every table lives in `schema`. */
export type ProjectionTarget = {
  readonly client: PoolClient
  /** A plain lowercase identifier (safe to interpolate, always double-quoted in SQL). */
  readonly schema: string
  /**
   * The event log's table (`"eventstore".events`) when the store is PostgreSQL in this same database:
   * a projection may copy stored payloads from it by `event_id` instead of sending them back to the
   * server (they are jsonb there already). An optimisation only: every projection works without it.
   */
  readonly eventTable?: string
}

/**
 * A read model: the tables it owns and how a batch of events changes them. The projector calls
 * `apply` inside the transaction that also moves this projection's checkpoint, so `apply` is called
 * exactly once per event: it needs no idempotency of its own, and must not commit or roll back.
 */
export type Projection = {
  /** Lowercase, `[a-z_]+`: the checkpoint's name and the CLI's `satang project --rebuild NAME`. */
  readonly name: string
  readonly description: string
  /** Stream name prefixes this projection reads (`order-`, …); `'all'` for every stream. Others are passed over (the checkpoint still moves). */
  readonly streams: ReadonlyArray<string> | 'all'
  /** Tables it owns, unqualified. A rebuild builds all of them in a scratch schema and swaps them in at once. */
  readonly tables: ReadonlyArray<string>
  /** DDL creating every table of `tables` (with indexes) in `schema`. Run in an empty schema. */
  readonly createTables: (schema: string) => ReadonlyArray<string>
  /** Views over the tables, unqualified names; dropped and recreated around a swap. */
  readonly views?: ReadonlyArray<string>
  /** DDL (`create or replace view …`) for `views`, reading the tables in `schema`. */
  readonly createViews?: (schema: string) => ReadonlyArray<string>
  /** Applies a batch in log order. Throws only for an operational failure (the batch is retried). */
  readonly apply: (target: ProjectionTarget, events: ReadonlyArray<ProjectedEvent>) => Promise<void>
}

/** Whether a projection reads events of `stream`. */
export const readsStream = (p: Pick<Projection, 'streams'>, stream: string): boolean => p.streams === 'all' || p.streams.some((prefix) => stream.startsWith(prefix))

/** Builds a `ProjectedEvent` from a stored event and its decoded domain event (tests and the projector). */
export const projectedEventOf = (recorded: RecordedEvent, event: DomainEvent): ProjectedEvent => ({
  event,
  eventId: recorded.eventId,
  streamName: recorded.streamName,
  streamRevision: recorded.streamRevision,
  position: recorded.position,
  storedSchemaVersion: recorded.schemaVersion,
  storedData: recorded.data,
  metadata: recorded.metadata,
  recordedAt: recorded.recordedAt,
})

/** A quoted, schema-qualified table name: `"schema"."table"`. */
export const qualified = (schema: string, table: string): string => `"${schema}"."${table}"`

/** Where the read models live, for the code that reads them (HTTP routes, CLI reports). */
export type ReadModels = {
  readonly pool: Pool
  /** The read-model schema (default `satang`). */
  readonly schema: string
}
