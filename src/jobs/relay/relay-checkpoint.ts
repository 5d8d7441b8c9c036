import { Position } from '../../application/ports/event-store.ts'
import type { SerialQuery } from '../../platform/postgres/one-at-a-time.ts'

/**
 * The relay's checkpoint, one row per topic in `<schema>.relay_checkpoints` (beside the projections'
 * checkpoints): the last event the broker acknowledged, what was published, the last error. Only the
 * relay holding the relay lock writes it, and it writes through the very session that holds the lock,
 * so a relay that lost its lock (its connection died) cannot move the checkpoint any more.
 */
export const RELAY_CHECKPOINTS_TABLE = 'relay_checkpoints'

const table = (schema: string): string => `"${schema}"."${RELAY_CHECKPOINTS_TABLE}"`

export const createRelayCheckpointsTable = (schema: string): string => `
create table if not exists ${table(schema)} (
  topic              text primary key,
  position           text collate "C",
  last_recorded_at   timestamptz,
  events_published   bigint not null default 0,
  published_at       timestamptz,
  publish_rate       double precision not null default 0,
  holder             text,
  holder_since       timestamptz,
  last_error         text,
  last_error_kind    text,
  last_error_at      timestamptz,
  failing            boolean not null default false,
  updated_at         timestamptz not null default now()
)`

/** The relay's heartbeat: when the process holding the lock last said it is alive (written every few seconds while it holds the lock). */
export const addRelayHeartbeatColumn = (schema: string): string => `alter table ${table(schema)} add column if not exists heartbeat_at timestamptz`

export type RelayCheckpoint = {
  readonly topic: string
  /** The last event acknowledged by the broker; null: nothing published yet (the relay starts at the beginning of the log). */
  readonly position: Position | null
  /** When the store committed that event. */
  readonly lastRecordedAt: Date | null
  readonly eventsPublished: number
  /** When the checkpoint last moved. */
  readonly publishedAt: Date | null
  /** Events per second over the last 10 s, as of `publishedAt`. */
  readonly publishRate: number
  /** The process that took the lock last (`host pid N`), and since when. */
  readonly holder: string | null
  readonly holderSince: Date | null
  readonly lastError: null | { readonly at: Date; readonly kind: string; readonly message: string }
  /** Whether the holder's last attempt failed (it is waiting to retry); false once it publishes or connects again. */
  readonly failing: boolean
  /** When the process holding the lock last wrote its heartbeat (null: before heartbeats existed, or never). */
  readonly heartbeatAt: Date | null
}

type Row = {
  topic: string
  position: string | null
  last_recorded_at: Date | null
  events_published: string
  published_at: Date | null
  publish_rate: number
  holder: string | null
  holder_since: Date | null
  last_error: string | null
  last_error_kind: string | null
  last_error_at: Date | null
  failing: boolean
  heartbeat_at: Date | null
}

const positionOf = (p: string | null): Position | null => {
  if (p === null) return null
  const decoded = Position.decode(p)
  if (decoded._tag === 'Left') throw new Error(`relay checkpoint: stored position ${JSON.stringify(p)} is not a position`)
  return decoded.right
}

const toCheckpoint = (r: Row): RelayCheckpoint => ({
  topic: r.topic,
  position: positionOf(r.position),
  lastRecordedAt: r.last_recorded_at,
  eventsPublished: Number(r.events_published),
  publishedAt: r.published_at,
  publishRate: r.publish_rate,
  holder: r.holder,
  holderSince: r.holder_since,
  lastError: r.last_error === null ? null : { at: r.last_error_at ?? new Date(0), kind: r.last_error_kind ?? 'unknown', message: r.last_error },
  failing: r.failing,
  heartbeatAt: r.heartbeat_at,
})

/** The pool (readers), or the relay lock session (the holder's writes, one query at a time). */
type Db = { readonly query: SerialQuery }

/** The checkpoint of `topic`, or undefined when no relay ever ran for it. */
export const readRelayCheckpoint = async (db: Db, schema: string, topic: string): Promise<RelayCheckpoint | undefined> => {
  const { rows } = await db.query<Row>(
    `select topic, position, last_recorded_at, events_published::text, published_at, publish_rate, holder, holder_since, last_error, last_error_kind, last_error_at, failing, heartbeat_at
       from ${table(schema)} where topic = $1`,
    [topic],
  )
  const row = rows[0]
  return row === undefined ? undefined : toCheckpoint(row)
}

/** Creates the row of `topic` (at the start of the log) if absent, and names its new holder. */
export const claimRelayCheckpoint = async (db: Db, schema: string, topic: string, holder: string): Promise<void> => {
  await db.query(
    `insert into ${table(schema)} (topic, holder, holder_since) values ($1, $2, now())
     on conflict (topic) do update set holder = excluded.holder, holder_since = excluded.holder_since, updated_at = now()`,
    [topic, holder],
  )
}

/**
 * Moves the checkpoint after the broker acknowledged up to `position`. Only forward: false when the
 * stored checkpoint is already at or past it (someone else published; the caller re-reads).
 */
export const advanceRelayCheckpoint = async (
  db: Db,
  schema: string,
  topic: string,
  moved: { readonly position: Position; readonly recordedAt: Date; readonly published: number; readonly rate: number },
): Promise<boolean> => {
  const { rowCount } = await db.query(
    `update ${table(schema)}
        set position = $2, last_recorded_at = $3, events_published = events_published + $4, publish_rate = $5, published_at = now(), failing = false, updated_at = now()
      where topic = $1 and (position is null or position < $2)`,
    [topic, moved.position, moved.recordedAt, moved.published, moved.rate],
  )
  return rowCount === 1
}

/** Records why the relay stopped publishing (it retries; the row keeps the last error and when). */
export const recordRelayError = async (db: Db, schema: string, topic: string, error: { readonly kind: string; readonly message: string }): Promise<void> => {
  await db.query(`update ${table(schema)} set last_error = $2, last_error_kind = $3, last_error_at = now(), failing = true, updated_at = now() where topic = $1`, [topic, error.message, error.kind])
}

/** The relay reached its destination again after a failure (the last error stays, as history). */
export const clearRelayFailing = async (db: Db, schema: string, topic: string): Promise<void> => {
  await db.query(`update ${table(schema)} set failing = false, updated_at = now() where topic = $1 and failing`, [topic])
}

/** The topics some relay ever published to from this database (one checkpoint row each), by name. */
export const relayTopics = async (db: Db, schema: string): Promise<ReadonlyArray<string>> => {
  const { rows } = await db.query<{ topic: string }>(`select topic from ${table(schema)} order by topic`)
  return rows.map((r) => r.topic)
}

/** The holder's heartbeat: it holds the lock and its loop is alive (written through the lock's own session). */
export const writeRelayHeartbeat = async (db: Db, schema: string, topic: string): Promise<void> => {
  await db.query(`update ${table(schema)} set heartbeat_at = now() where topic = $1`, [topic])
}
