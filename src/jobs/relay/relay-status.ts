import type { Pool } from 'pg'
import { lagAfter } from '../../application/log-lag.ts'
import type { EventStore, Position } from '../../application/ports/event-store.ts'
import { SERVICE_LOCK, SERVICE_LOCKS } from '../../platform/postgres/names.ts'
import { readRelayCheckpoint, relayTopics } from './relay-checkpoint.ts'
import { RELAY_APPLICATION_NAME } from './relay-lock.ts'

/** Rates older than this are no longer current: nothing was published since. */
const RATE_WINDOW_MS = 10_000

/** A heartbeat older than this while a relay holds the lock: its loop is stuck (it writes one every 5 s). */
export const RELAY_HEARTBEAT_STALE_MS = 30_000

/**
 * - `publishing`: a relay holds the lock and its last attempt succeeded;
 * - `stalled`: a relay holds the lock but has not written its heartbeat for 30 s (its loop is stuck);
 * - `failing`: a relay holds the lock but its last attempt failed (see `lastError`; it retries);
 * - `not_running`: no relay holds the lock (none runs, or all stand by for a moment during a takeover);
 * - `never_ran`: no relay ever published to this topic from this database.
 */
export type RelayState = 'publishing' | 'failing' | 'stalled' | 'not_running' | 'never_ran'

/** The relay of one topic as seen from the database: who publishes, how far behind, the last error. */
export type RelayStatus = {
  readonly topic: string
  readonly state: RelayState
  /** The session holding the relay lock: its `application_name` (host and pid), backend pid, since when. */
  readonly holder: null | { readonly application: string; readonly backendPid: number; readonly since: Date | null }
  /** Relay sessions standing by (connected, not holding the lock). */
  readonly standbys: number
  readonly position: Position | null
  readonly eventsBehind: number
  readonly eventsBehindCapped: boolean
  readonly secondsBehind: number
  readonly eventsPublished: number
  /** Events per second over the last 10 s (0 when nothing was published in that time). */
  readonly publishRate: number
  readonly publishedAt: Date | null
  readonly lastError: null | { readonly at: Date; readonly kind: string; readonly message: string }
  /** When the publishing process last wrote its heartbeat. */
  readonly heartbeatAt: Date | null
}

type SessionRow = { application_name: string; pid: number; backend_start: Date | null; holds: boolean }

/** Relay lock sessions of this database: the holder (if any) and the ones standing by. */
const relaySessions = async (pool: Pool): Promise<ReadonlyArray<SessionRow>> => {
  const { rows } = await pool.query<SessionRow>(
    `select a.application_name, a.pid, a.backend_start,
            exists (select 1 from pg_locks l
                     where l.pid = a.pid and l.locktype = 'advisory' and l.granted
                       and l.database = (select oid from pg_database where datname = current_database())
                       and l.classid = $1::bigint::oid and l.objid = $2::bigint::oid and l.objsubid = 2) as holds
       from pg_stat_activity a
      where a.datname = current_database() and a.application_name like $3`,
    [SERVICE_LOCKS, SERVICE_LOCK.relay, `${RELAY_APPLICATION_NAME}%`],
  )
  return rows
}

/** The status of the relay publishing `topic`, from its checkpoint row, the lock, and the log's head. */
export const readRelayStatus = async (deps: { readonly store: EventStore; readonly pool: Pool }, schema: string, topic: string, now: () => Date = () => new Date()): Promise<RelayStatus> => {
  const [checkpoint, sessions] = await Promise.all([readRelayCheckpoint(deps.pool, schema, topic), relaySessions(deps.pool)])
  const lag = await lagAfter(deps.store, checkpoint?.position ?? undefined, now)
  const holding = sessions.find((s) => s.holds)
  const lastError = checkpoint?.lastError ?? null
  const publishedAt = checkpoint?.publishedAt ?? null
  const failing = checkpoint?.failing === true
  const heartbeatAt = checkpoint?.heartbeatAt ?? null
  const stale = heartbeatAt !== null && now().getTime() - heartbeatAt.getTime() > RELAY_HEARTBEAT_STALE_MS
  const state: RelayState = checkpoint === undefined ? 'never_ran' : holding === undefined ? 'not_running' : failing ? 'failing' : stale ? 'stalled' : 'publishing'
  const rateCurrent = publishedAt !== null && now().getTime() - publishedAt.getTime() <= RATE_WINDOW_MS
  return {
    topic,
    state,
    holder: holding === undefined ? null : { application: holding.application_name, backendPid: holding.pid, since: checkpoint?.holderSince ?? holding.backend_start },
    standbys: sessions.filter((s) => !s.holds).length,
    position: checkpoint?.position ?? null,
    ...lag,
    eventsPublished: checkpoint?.eventsPublished ?? 0,
    publishRate: rateCurrent ? (checkpoint?.publishRate ?? 0) : 0,
    publishedAt,
    lastError,
    heartbeatAt,
  }
}

/**
 * The relays of this database as their own rows say, whatever the configuration of the process asking:
 * every topic a relay ever published to, or `fallback` (as `never_ran`) when there is none.
 */
export const readRelayStatuses = async (deps: { readonly store: EventStore; readonly pool: Pool }, schema: string, fallback: string, now: () => Date = () => new Date()): Promise<ReadonlyArray<RelayStatus>> => {
  const topics = await relayTopics(deps.pool, schema)
  return Promise.all((topics.length === 0 ? [fallback] : topics).map((topic) => readRelayStatus(deps, schema, topic, now)))
}
