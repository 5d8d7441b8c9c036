import { randomUUID } from 'node:crypto'
import type { Pool } from 'pg'
import type { EventMetadata, Position } from '../../src/domain/event-store.ts'
import { encodeDomainEvent, eventSourceOf, type DomainEvent } from '../../src/domain/events/registry.ts'
import { projectedEventOf, type ProjectedEvent, type Projection } from '../../src/projections/types.ts'

/**
 * Builds `ProjectedEvent`s as the projector would hand them over, without an event store: stream
 * revisions count per stream, positions increase in the order given, the data is the event encoded
 * at its newest version (as the store would keep it).
 */
export const makeEventFactory = (start = new Date('2026-11-21T03:00:00.000Z')) => {
  const revisions = new Map<string, bigint>()
  let seq = 0
  return (stream: string, event: DomainEvent, metadata: Partial<EventMetadata> = {}): ProjectedEvent => {
    seq += 1
    const revision = revisions.get(stream) ?? 0n
    revisions.set(stream, revision + 1n)
    const recordedAt = new Date(start.getTime() + seq * 1000)
    const encoded = encodeDomainEvent(event)
    return projectedEventOf(
      {
        eventId: randomUUID(),
        type: encoded.type,
        schemaVersion: encoded.schemaVersion,
        data: encoded.data,
        metadata: { correlationId: 'c-1', causationId: 'c-1', recordedAt: recordedAt.toISOString(), source: eventSourceOf(event), ...metadata },
        streamName: stream,
        streamRevision: revision,
        position: `${String(seq).padStart(20, '0')}-${String(seq).padStart(20, '0')}` as Position,
        recordedAt,
      },
      event,
    )
  }
}

/** Creates the projection's tables (and views) in `schema` (created if missing). */
export const createProjectionTables = async (pool: Pool, schema: string, projection: Projection): Promise<void> => {
  await pool.query(`create schema if not exists "${schema}"`)
  for (const sql of projection.createTables(schema)) await pool.query(sql)
  for (const sql of projection.createViews?.(schema) ?? []) await pool.query(sql)
}

/** Applies `events` (those of streams the projection reads) in one committed transaction, as the projector does. */
export const applyInTransaction = async (pool: Pool, schema: string, projection: Projection, events: ReadonlyArray<ProjectedEvent>): Promise<void> => {
  const client = await pool.connect()
  try {
    await client.query('begin')
    await projection.apply({ client, schema }, events.filter((e) => projection.streams === 'all' || projection.streams.some((p) => e.streamName.startsWith(p))))
    await client.query('commit')
  } catch (e) {
    await client.query('rollback').catch(() => undefined)
    throw e
  } finally {
    client.release()
  }
}
