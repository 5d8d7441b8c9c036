import { randomUUID } from 'node:crypto'
import type { Pool } from 'pg'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { BANGKOK_OFFSET_MS } from '../../src/domain/bangkok-time.ts'
import type { EventMetadata, EventStore, Position } from '../../src/application/ports/event-store.ts'
import { encodeDomainEvent, eventSourceOf, type DomainEvent } from '../../src/domain/events/registry.ts'
import { silentLogger } from '../../src/logger.ts'
import { migrateReadModels } from '../../src/projections/migrations.ts'
import { projectedEventOf, type ProjectedEvent, type Projection } from '../../src/projections/types.ts'
import { freshEventStoreSchema, testDatabaseUrl, uniqueSchemaName } from '../support/postgres.ts'

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

/** An event log of its own and read models migrated beside it, on the int tests' PostgreSQL. */
export type ProjectionDatabase = {
  readonly pool: Pool
  readonly store: EventStore
  /** The read-model schema. */
  readonly schema: string
  /** Closes the store and drops both schemas (and the pool). */
  readonly drop: () => Promise<void>
}

export const freshProjectionDatabase = async (label: string, projections: ReadonlyArray<Projection>, poolMax = 8): Promise<ProjectionDatabase> => {
  const log = silentLogger()
  const es = await freshEventStoreSchema(label, log)
  const pool = es.pool(poolMax)
  const store = makePostgresEventStore({ pool, log }, { schema: es.schema })
  const schema = uniqueSchemaName('rm')
  await migrateReadModels({ pool, log }, { schema, projections })
  return {
    pool,
    store,
    schema,
    drop: async () => {
      await store.close()
      await pool.query(`drop schema if exists "${schema}" cascade`)
      await es.drop()
    },
  }
}

/** Schemas holding one projection's tables (no log, no checkpoints), for tests that call `apply` themselves. */
export type ProjectionSchemas = {
  readonly pool: () => Pool
  /** A new schema with the projection's tables. */
  readonly fresh: (label: string) => Promise<string>
  /** Drops every schema made here and ends the pool. */
  readonly drop: () => Promise<void>
}

export const projectionSchemas = (projection: Projection): ProjectionSchemas => {
  let pool: Pool | undefined
  const schemas: string[] = []
  const poolOf = (): Pool => (pool ??= makePostgresPool({ url: testDatabaseUrl(), poolMax: 4, applicationName: `satang-test-${projection.name}` }, silentLogger()))
  return {
    pool: poolOf,
    fresh: async (label) => {
      const schema = uniqueSchemaName(label)
      schemas.push(schema)
      await createProjectionTables(poolOf(), schema, projection)
      return schema
    },
    drop: async () => {
      if (pool === undefined) return
      for (const schema of schemas) await pool.query(`drop schema if exists "${schema}" cascade`)
      await pool.end()
    },
  }
}

// ---- reading a table canonically: every column as the row functions write it ----

/** `yyyy-MM-ddTHH:mm:ss.SSS` in Bangkok, as the generated `*_bangkok` columns must hold it. */
export const bangkok = (iso: unknown): string | null => (typeof iso === 'string' ? new Date(Date.parse(iso) + BANGKOK_OFFSET_MS).toISOString().slice(0, -1) : null)

const canonicalColumn = (name: string, type: string): string => {
  switch (type) {
    case 'timestamp with time zone':
      return `to_char("${name}" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "${name}"`
    case 'timestamp without time zone':
      return `to_char("${name}", 'YYYY-MM-DD"T"HH24:MI:SS.MS') as "${name}"`
    case 'date':
      return `to_char("${name}", 'YYYY-MM-DD') as "${name}"`
    case 'bigint':
      return `"${name}"::text as "${name}"`
    default:
      return `"${name}"`
  }
}

/** The rows of `schema.table` for `streams` (all when omitted), every column in canonical text form, ordered by `orderBy`. */
export const canonicalRows = async (pool: Pool, schema: string, table: string, orderBy: string, streams?: ReadonlyArray<string>): Promise<Array<Record<string, unknown>>> => {
  const columns = await pool.query<{ column_name: string; data_type: string }>(
    'select column_name, data_type from information_schema.columns where table_schema = $1 and table_name = $2 order by ordinal_position',
    [schema, table],
  )
  const select = columns.rows.map((c) => canonicalColumn(c.column_name, c.data_type)).join(', ')
  const where = streams === undefined ? '' : 'where stream_name = any($1::text[])'
  const { rows } = await pool.query<Record<string, unknown>>(`select ${select} from "${schema}"."${table}" ${where} order by ${orderBy}`, streams === undefined ? [] : [streams])
  return rows
}
