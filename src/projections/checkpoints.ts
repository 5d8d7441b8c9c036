import { createHash } from 'node:crypto'
import type { Pool, PoolClient } from 'pg'
import type { Position } from '../application/ports/event-store.ts'
import { qualified } from './types.ts'

/**
 * One row per projection in `<schema>.projection_checkpoints`: how far it has applied the log, and why
 * it stopped if it did. The row is locked (`for update`) by every batch that moves it, in the same
 * transaction as the read-model writes, so a crash loses nothing and applies nothing twice, and two
 * projectors (or a projector and a rebuild) never apply the same events.
 */
export const CHECKPOINTS_TABLE = 'projection_checkpoints'

export const createCheckpointsTable = (schema: string): string => `
create table if not exists ${qualified(schema, CHECKPOINTS_TABLE)} (
  name               text primary key,
  position           text collate "C",
  last_recorded_at   timestamptz,
  events_applied     bigint not null default 0,
  updated_at         timestamptz not null default now(),
  failed_at          timestamptz,
  failure            text,
  failure_stream     text,
  failure_position   text
)`

export type Checkpoint = {
  readonly name: string
  /** The last event applied (null: none yet, the projection starts at the beginning of the log). */
  readonly position: Position | null
  /** When the store committed the last event applied. */
  readonly lastRecordedAt: Date | null
  readonly eventsApplied: number
  readonly updatedAt: Date
  readonly failure: null | { readonly at: Date; readonly message: string; readonly stream: string | null; readonly position: string | null }
}

type Row = {
  name: string
  position: string | null
  last_recorded_at: Date | null
  events_applied: string
  updated_at: Date
  failed_at: Date | null
  failure: string | null
  failure_stream: string | null
  failure_position: string | null
}

const toCheckpoint = (r: Row): Checkpoint => ({
  name: r.name,
  position: r.position as Position | null,
  lastRecordedAt: r.last_recorded_at,
  eventsApplied: Number(r.events_applied),
  updatedAt: r.updated_at,
  failure: r.failure === null ? null : { at: r.failed_at ?? r.updated_at, message: r.failure, stream: r.failure_stream, position: r.failure_position },
})

/**
 * A statement every batch runs, prepared once per connection (as the event store's are): its name is
 * a digest of its text, which holds the schema, so two schemas never share a name.
 */
const prepared = new Map<string, { readonly name: string; readonly text: string }>()
const preparedStatement = (text: string): { readonly name: string; readonly text: string } => {
  let statement = prepared.get(text)
  if (statement === undefined) {
    statement = { name: `satang_cp_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`, text }
    prepared.set(text, statement)
  }
  return statement
}

/** The checkpoints of `names` (missing rows are absent from the map); `forUpdate` locks them for this transaction. */
export const readCheckpoints = async (db: Pool | PoolClient, schema: string, names: ReadonlyArray<string>, forUpdate = false): Promise<ReadonlyMap<string, Checkpoint>> => {
  const text = `select name, position, last_recorded_at, events_applied::text, updated_at, failed_at, failure, failure_stream, failure_position
       from ${qualified(schema, CHECKPOINTS_TABLE)} where name = any($1::text[]) order by name${forUpdate ? ' for update' : ''}`
  // The locking read runs in every batch's transaction: prepared once per connection.
  const { rows } = await db.query<Row>(forUpdate ? { ...preparedStatement(text), values: [names] } : { text, values: [names] })
  return new Map(rows.map((r) => [r.name, toCheckpoint(r)]))
}

/** Creates missing checkpoint rows (at the start of the log). */
export const ensureCheckpoints = async (db: Pool | PoolClient, schema: string, names: ReadonlyArray<string>): Promise<void> => {
  await db.query(`insert into ${qualified(schema, CHECKPOINTS_TABLE)} (name) select unnest($1::text[]) on conflict (name) do nothing`, [names])
}

/** Moves a checkpoint after a batch; clears a recorded failure (the projection got past it). */
export const advanceCheckpoint = async (client: PoolClient, schema: string, name: string, position: Position, recordedAt: Date, applied: number): Promise<void> => {
  const text = `update ${qualified(schema, CHECKPOINTS_TABLE)}
        set position = $2, last_recorded_at = $3, events_applied = events_applied + $4, updated_at = now(),
            failed_at = null, failure = null, failure_stream = null, failure_position = null
      where name = $1`
  await client.query({ ...preparedStatement(text), values: [name, position, recordedAt, applied] })
}

/** Stops a projection: the checkpoint stays before the event it could not apply. */
export const recordFailure = async (client: PoolClient | Pool, schema: string, name: string, failure: { readonly message: string; readonly stream: string | null; readonly position: string | null }): Promise<void> => {
  await client.query(
    `update ${qualified(schema, CHECKPOINTS_TABLE)} set failed_at = now(), failure = $2, failure_stream = $3, failure_position = $4, updated_at = now() where name = $1`,
    [name, failure.message, failure.stream, failure.position],
  )
}

/** Clears a recorded failure: the projection is tried again from its checkpoint. */
export const clearFailure = async (db: Pool | PoolClient, schema: string, name: string): Promise<void> => {
  await db.query(`update ${qualified(schema, CHECKPOINTS_TABLE)} set failed_at = null, failure = null, failure_stream = null, failure_position = null where name = $1`, [name])
}
