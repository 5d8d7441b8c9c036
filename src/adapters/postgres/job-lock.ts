import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { Pool, PoolClient } from 'pg'
import type { JobLock, JobResource, Lease, LockFailure } from '../../application/ports/job-lock.ts'
import type { Logger } from '../../logger.ts'
import { isRetriablePgError } from '../../platform/postgres/errors.ts'
import { RECONCILE_LOCKS, SERVICE_LOCK, SERVICE_LOCKS, reconcileLockResource } from '../../platform/postgres/names.ts'

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
