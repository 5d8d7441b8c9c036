import * as E from 'fp-ts/lib/Either.js'
import { Client, type Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresStreamLocks } from '../../../src/adapters/postgres/job-lock.ts'
import type { StreamLease } from '../../../src/application/ports/job-lock.ts'
import { silentLogger } from '../../../src/logger.ts'
import { makePostgresPool } from '../../../src/platform/postgres/pool.ts'
import { freshDatabase } from '../http/database.ts'
import { hearPgQueuedQueries } from '../../support/pg-queued-query.ts'

/**
 * The stream locks' session (one connection per process, outside the pool) after its connection is
 * killed, as when PostgreSQL restarts: the locks it held are free, and the next tryLock opens a new
 * session. Found by the chaos suite: a session ended after a failed query stayed the current one, so
 * every later tryLock asked the closed client again, creates went out without their lock and unknown
 * outcomes were never resolved until satang restarted. Real PostgreSQL; the kill is pg_terminate_backend.
 */

const log = silentLogger()
let db: Awaited<ReturnType<typeof freshDatabase>>
let pool: Pool
let admin: Client

beforeAll(async () => {
  db = await freshDatabase('locks')
  pool = makePostgresPool({ url: db.url }, log)
  admin = new Client({ connectionString: db.url })
  await admin.connect()
})

afterAll(async () => {
  await admin.end()
  await pool.end()
  await db.drop()
})

const name = (): string => new URL(db.url).pathname.slice(1)

/** Terminates every stream-lock session on this test's database; how many it ended. */
const killSessions = async (): Promise<number> => {
  const r = await admin.query<{ n: string }>(
    `select count(pg_terminate_backend(pid))::text as n from pg_stat_activity where datname = $1 and application_name = 'satang-stream-locks'`,
    [name()],
  )
  return Number(r.rows[0]?.n ?? 0)
}

const sessions = async (): Promise<number> =>
  Number((await admin.query<{ n: string }>(`select count(*)::text as n from pg_stat_activity where datname = $1 and application_name = 'satang-stream-locks'`, [name()])).rows[0]?.n ?? 0)

/** tryLock until it answers (at most `attempts` times): the first lease or null, or the last failure. */
const lockWithin = async (locks: ReturnType<typeof makePostgresStreamLocks>, stream: string, attempts: number): Promise<{ readonly lease: StreamLease | null; readonly failures: number }> => {
  let failures = 0
  for (let i = 0; i < attempts; i++) {
    const r = await locks.tryLock(stream)()
    if (E.isRight(r)) return { lease: r.right, failures }
    failures += 1
  }
  throw new Error(`tryLock(${stream}) failed ${String(attempts)} times in a row: the session is not opened again`)
}

describe('stream locks when their connection dies', () => {
  it('open a new session on the next tryLock, whether the break was seen by a query or by the socket', async () => {
    const locks = makePostgresStreamLocks({ pool, log })
    const other = makePostgresStreamLocks({ pool, log })
    try {
      const first = await lockWithin(locks, 'order-A', 1)
      expect(first.lease).not.toBeNull()
      // The other process is refused while this one holds it.
      expect(await other.tryLock('order-A')()).toEqual(E.right(null))

      for (let round = 1; round <= 3; round++) {
        expect(await killSessions()).toBeGreaterThanOrEqual(1)
        // The next call may fail once (its query meets the dead connection); then a new session answers.
        const next = await lockWithin(locks, `order-B${String(round)}`, 3)
        expect(next.lease).not.toBeNull()
        expect(next.failures).toBeLessThanOrEqual(1)
        await next.lease?.release()
      }
      // The lock held by the killed session is free: the other process takes it, and this one is refused.
      const taken = await lockWithin(other, 'order-A', 2)
      expect(taken.lease).not.toBeNull()
      expect(await locks.tryLock('order-A')()).toEqual(E.right(null))
      // Releasing the lease of a dead session does nothing (and does not throw).
      await first.lease?.release()
      await taken.lease?.release()
      expect((await lockWithin(locks, 'order-A', 1)).lease).not.toBeNull()
      expect(await sessions()).toBe(2)
    } finally {
      await locks.close()
      await other.close()
    }
  })

  it('many tryLocks and releases at once share the one session in turn: each stream locked once, and pg does not warn', async () => {
    // Before, they were all sent to the session's client at once: pg 8 queued them and warned (once per
    // process, in every satang run that created payments concurrently) that pg 9 will refuse it.
    const pgWarnings = hearPgQueuedQueries()
    const locks = makePostgresStreamLocks({ pool, log })
    const other = makePostgresStreamLocks({ pool, log })
    try {
      const streams = Array.from({ length: 40 }, (_, i) => `order-many-${String(i % 20)}`)
      const results = await Promise.all(streams.map((s) => locks.tryLock(s)()))
      const leases = results.map((r) => (E.isRight(r) ? r.right : 'failed'))
      expect(leases.filter((l) => l === 'failed')).toEqual([])
      // Each of the 20 streams is held once: the second ask of this process for it is refused.
      expect(leases.filter((l) => l !== null)).toHaveLength(20)
      // The other process is refused every one of them, then takes each once all are released at once.
      expect((await Promise.all(streams.slice(0, 20).map((s) => other.tryLock(s)()))).every((r) => E.isRight(r) && r.right === null)).toBe(true)
      await Promise.all(leases.map((l) => (l !== null && l !== 'failed' ? l.release() : Promise.resolve())))
      const after = await Promise.all(streams.slice(0, 20).map((s) => other.tryLock(s)()))
      expect(after.every((r) => E.isRight(r) && r.right !== null)).toBe(true)
      await new Promise((r) => setTimeout(r, 20))
      expect(pgWarnings.heard()).toEqual([])
    } finally {
      pgWarnings.stop()
      await locks.close()
      await other.close()
    }
  })
})
