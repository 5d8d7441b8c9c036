import { Client, type Pool } from 'pg'
import type { Logger } from '../../logger.ts'
import { oneAtATime, type SerialQuery } from '../../platform/postgres/one-at-a-time.ts'
import { SERVICE_LOCK, SERVICE_LOCKS } from '../../platform/postgres/names.ts'

/**
 * The relay lock: a PostgreSQL session-level advisory lock `(SERVICE_LOCKS, SERVICE_LOCK.relay)` held on a
 * connection of its own for as long as the relay publishes. Only one session of the database can hold
 * it, so only one relay publishes; the others stand by and try again every second.
 *
 * When the holder dies its connection closes and PostgreSQL releases the lock at once (a killed
 * process's socket is closed by its kernel); a standby takes over at its next try. When the holder's
 * machine vanishes without closing the socket, the server notices through TCP keepalives (set on this
 * session: about 10 s), and the holder notices through its heartbeat and stops publishing.
 */
export type LockSession = {
  /**
   * A query on the session's own connection: checkpoint writes go through it, so they fail once the lock
   * is lost. One at a time: the publishing loop, the checkpoint row's heartbeat and the connection's
   * heartbeat below share the connection, and a query sent while another runs is queued by pg 8 with a
   * warning and refused by pg 9.
   */
  readonly query: SerialQuery
  /** Tries once; true when this session holds the lock (now or already). */
  readonly tryAcquire: () => Promise<boolean>
  /** Settles when the connection is lost (with the reason); never rejects. */
  readonly lost: Promise<Error>
  readonly isLost: () => boolean
  /** Releases the lock (if held) and closes the connection. */
  readonly close: () => Promise<void>
}

export type LockSessionConfig = {
  /** `application_name` of the session, naming the process (`pg_stat_activity`, `satang relay --status`). */
  readonly applicationName: string
  /** How often the session checks its connection while open. Default 2000 ms. */
  readonly heartbeatMs?: number
}

/** The prefix of every relay lock session's `application_name`. */
export const RELAY_APPLICATION_NAME = 'satang-relay'

const KEEPALIVE_SQL = ['set tcp_keepalives_idle = 5', 'set tcp_keepalives_interval = 2', 'set tcp_keepalives_count = 3', "set statement_timeout = '15s'"]

/**
 * A heartbeat on the session's connection: each call runs `beat` unless the last one is still waiting
 * (behind the publishing loop's queries, or on a connection that stopped answering, which the
 * keepalives and the statement timeout end); the next call after it runs again. So beats never pile up
 * in the one-at-a-time queue.
 */
export const heartbeatOf = (beat: () => Promise<unknown>): (() => void) => {
  let beating = false
  return () => {
    if (beating) return
    beating = true
    void beat().finally(() => (beating = false))
  }
}

/** Opens a lock session on the database of `pool` (a connection outside the pool). */
export const openLockSession = async (deps: { readonly pool: Pool; readonly log: Logger }, config: LockSessionConfig): Promise<LockSession> => {
  const client = new Client({ ...deps.pool.options, application_name: config.applicationName.slice(0, 63), keepAlive: true, keepAliveInitialDelayMillis: 5_000 })
  let lostWith: Error | undefined
  let onLost: ((e: Error) => void) | undefined
  const lost = new Promise<Error>((resolve) => (onLost = resolve))
  const markLost = (e: Error): void => {
    if (lostWith !== undefined) return
    lostWith = e
    onLost?.(e)
  }
  client.on('error', (e) => markLost(e))
  client.on('end', () => markLost(new Error('the relay lock connection closed')))
  await client.connect()
  const query = oneAtATime(client)
  let held = false
  let heartbeat: NodeJS.Timeout | undefined
  try {
    for (const sql of KEEPALIVE_SQL) await query(sql)
  } catch (e) {
    await client.end().catch((err: unknown) => deps.log.debug({ err }, 'closing a relay lock session that failed to start'))
    throw e
  }
  heartbeat = setInterval(
    heartbeatOf(() => query('select 1').catch((e: unknown) => markLost(e instanceof Error ? e : new Error(String(e))))),
    config.heartbeatMs ?? 2_000,
  )
  heartbeat.unref()

  const tryAcquire = async (): Promise<boolean> => {
    if (held) return true
    const { rows } = await query<{ ok: boolean }>('select pg_try_advisory_lock($1, $2) as ok', [SERVICE_LOCKS, SERVICE_LOCK.relay])
    held = rows[0]?.ok === true
    return held
  }

  const close = async (): Promise<void> => {
    if (heartbeat !== undefined) clearInterval(heartbeat)
    heartbeat = undefined
    if (lostWith === undefined && held) {
      await query('select pg_advisory_unlock($1, $2)', [SERVICE_LOCKS, SERVICE_LOCK.relay]).catch((err: unknown) => deps.log.warn({ err }, 'releasing the relay lock failed; closing its connection releases it'))
    }
    held = false
    markLost(new Error('the relay lock session was closed'))
    await client.end().catch((err: unknown) => deps.log.debug({ err }, 'closing the relay lock connection'))
  }

  return { query, tryAcquire, lost, isLost: () => lostWith !== undefined, close }
}
