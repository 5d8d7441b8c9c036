import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { Client, type Pool, type PoolClient } from 'pg'
import type { JobLock, JobResource, Lease, LockFailure, StreamLease, StreamLocks } from '../../application/ports/job-lock.ts'
import type { Logger } from '../../logger.ts'
import { isRetriablePgError } from '../../platform/postgres/errors.ts'
import { oneAtATime, type SerialQuery } from '../../platform/postgres/one-at-a-time.ts'
import { RECONCILE_LOCKS, RESOLUTION_LOCKS, SERVICE_LOCK, SERVICE_LOCKS, reconcileLockResource } from '../../platform/postgres/names.ts'

/**
 * Job locks as PostgreSQL session advisory locks on a connection of their own, held for the lease.
 * The database frees a lock the moment the session ends, so a process killed by SIGKILL leaves no lock
 * behind. The scheduler's lock is `(SERVICE_LOCKS, SERVICE_LOCK.scheduler)`; a run's is
 * `(RECONCILE_LOCKS, hashtext('reconcile:<merchant_id>'))`.
 */
export const makePostgresJobLock = (deps: { readonly pool: Pool; readonly log: Logger }): JobLock => {
  const log = deps.log.child({ component: 'job-lock' })
  const lockSql = (r: JobResource): { readonly take: string; readonly free: string; readonly params: ReadonlyArray<unknown> } =>
    r.job === 'scheduler'
      ? { take: 'select pg_try_advisory_lock($1::int, $2::int) as ok', free: 'select pg_advisory_unlock($1::int, $2::int)', params: [SERVICE_LOCKS, SERVICE_LOCK.scheduler] }
      : { take: 'select pg_try_advisory_lock($1::int, hashtext($2)) as ok', free: 'select pg_advisory_unlock($1::int, hashtext($2))', params: [RECONCILE_LOCKS, reconcileLockResource(r.merchantId)] }

  const failed = (cause: unknown): E.Either<LockFailure, never> => E.left({ _tag: 'LockFailure', retriable: isRetriablePgError(cause), cause })

  const tryAcquire = (r: JobResource): TE.TaskEither<LockFailure, Lease | null> => async () => {
    const sql = lockSql(r)
    let client: PoolClient
    try {
      client = await deps.pool.connect()
    } catch (cause) {
      return failed(cause)
    }
    try {
      const { rows } = await client.query<{ ok: boolean }>(sql.take, [...sql.params])
      if (rows[0]?.ok !== true) {
        client.release()
        return E.right(null)
      }
    } catch (cause) {
      client.release(true)
      return failed(cause)
    }
    let released = false
    const lost = new Promise<void>((resolve) => {
      const gone = (err?: unknown): void => {
        if (released) return
        released = true
        log.warn({ err, job: r.job }, 'the connection holding a job lock broke: the lock is lost')
        // Back to the pool as broken (destroyed): a client never returned would keep pool.end() waiting forever.
        client.release(true)
        resolve()
      }
      client.once('error', gone)
      client.once('end', () => gone())
    })
    const lease: Lease = {
      lost,
      release: async () => {
        if (released) return
        released = true
        try {
          // A connection to a database that is gone may never answer: give the unlock a second.
          await Promise.race([
            client.query(sql.free, [...sql.params]),
            new Promise((_, reject) => setTimeout(() => reject(new Error('unlock timed out')), 1_000).unref()),
          ])
          client.release()
        } catch (e) {
          // The session is gone or broken: destroying it frees the lock all the same.
          log.debug({ err: e, job: r.job }, 'unlock failed; the connection is closed instead')
          client.release(true)
        }
      },
    }
    return E.right(lease)
  }
  return { tryAcquire }
}

type LockSession = {
  readonly client: Client
  /** The client's queries in turn: every tryLock and release of the process shares this one connection. */
  readonly query: SerialQuery
  readonly held: Set<string>
  broken: boolean
  /** Stops handing this session out: the next `tryLock` opens a new one. */
  readonly forget: () => void
}

/**
 * Stream locks as session advisory locks `(RESOLUTION_LOCKS, hashtext(stream))`, all held on one
 * connection of this process, outside the pool: a thousand creates in flight cost one connection,
 * not a thousand. PostgreSQL decides between processes. A session may take its own lock again, so the
 * streams this session holds are also kept in `held`, which only stops this process from entering a
 * lock it already has. When the session breaks (or the process dies) PostgreSQL frees every lock it
 * held: its leases are gone (their release does nothing) and the next `tryLock` opens a new session.
 */
export const makePostgresStreamLocks = (deps: { readonly pool: Pool; readonly log: Logger }): StreamLocks & { readonly close: () => Promise<void> } => {
  const log = deps.log.child({ component: 'stream-locks' })
  const failed = (cause: unknown): E.Either<LockFailure, never> => E.left({ _tag: 'LockFailure', retriable: isRetriablePgError(cause) || cause instanceof Error, cause })
  let current: Promise<LockSession> | undefined
  let closed = false

  const open = (): Promise<LockSession> => {
    const client = new Client({ ...deps.pool.options, application_name: 'satang-stream-locks', keepAlive: true, query_timeout: 10_000 })
    const session: LockSession = {
      client,
      query: oneAtATime(client),
      held: new Set(),
      broken: false,
      forget: () => {
        if (current === opening) current = undefined
      },
    }
    const opening = (async () => {
      await client.connect()
      return session
    })()
    const broke = (err?: unknown): void => {
      session.forget()
      if (session.broken) return
      session.broken = true
      if (session.held.size > 0) log.warn({ err, held: session.held.size }, 'the stream lock session broke: its locks are free again')
      session.held.clear()
    }
    client.on('error', broke)
    client.on('end', () => broke())
    opening.catch((err: unknown) => broke(err))
    return opening
  }

  const session = (): Promise<LockSession> => {
    current ??= open()
    return current
  }

  // A session ended here is forgotten too: ending it marks it broken first, so its 'end' event finds
  // nothing left to do, and without this every later tryLock would ask the closed client again.
  const end = async (s: LockSession): Promise<void> => {
    s.broken = true
    s.held.clear()
    s.forget()
    await s.client.end().catch((err: unknown) => log.debug({ err }, 'closing the stream lock session'))
  }

  const tryLock = (stream: string): TE.TaskEither<LockFailure, StreamLease | null> => async () => {
    if (closed) return failed(new Error('the stream locks are closed'))
    let s: LockSession
    try {
      s = await session()
    } catch (cause) {
      return failed(cause)
    }
    if (s.held.has(stream)) return E.right(null)
    // Reserved before asking, so two callers of this process never both ask for the same stream.
    s.held.add(stream)
    try {
      const { rows } = await s.query<{ ok: boolean }>('select pg_try_advisory_lock($1::int, hashtext($2)) as ok', [RESOLUTION_LOCKS, stream])
      if (rows[0]?.ok !== true) {
        s.held.delete(stream)
        return E.right(null)
      }
    } catch (cause) {
      // Whether the lock was taken is unknown: ending the session frees whatever it holds.
      await end(s)
      return failed(cause)
    }
    let released = false
    return E.right({
      release: async () => {
        if (released || s.broken) return
        released = true
        try {
          await s.query('select pg_advisory_unlock($1::int, hashtext($2))', [RESOLUTION_LOCKS, stream])
          s.held.delete(stream)
        } catch (err) {
          log.debug({ err }, 'unlocking a stream failed; the session is closed instead, which frees it')
          await end(s)
        }
      },
    })
  }

  return {
    tryLock,
    close: async () => {
      closed = true
      const s = await current?.catch(() => undefined)
      if (s !== undefined) await end(s)
    },
  }
}
