import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openLockSession } from '../../src/jobs/relay/relay-lock.ts'
import { silentLogger } from '../../src/logger.ts'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { hearPgQueuedQueries } from '../support/pg-queued-query.ts'

/**
 * The relay lock session's connection is shared by the publishing loop (checkpoint reads and writes),
 * the checkpoint row's heartbeat and the connection's own heartbeat. Found in CI (relay-broker-down.e2e):
 * a heartbeat fired while a checkpoint write ran, pg 8 queued it and printed its warning that pg 9 will
 * refuse it. The session now hands out only a one-at-a-time query. Real PostgreSQL, a database of the
 * test's own (the relay lock is the database's).
 */

const log = silentLogger()
let db: Awaited<ReturnType<typeof freshDatabase>>
let pool: Pool

beforeAll(async () => {
  db = await freshDatabase('relaylock')
  pool = makePostgresPool({ url: db.url }, log)
})

afterAll(async () => {
  await pool.end()
  await db.drop()
})

const APP = 'satang-relay lock-test'

const lastQuery = async (): Promise<string | undefined> => {
  const { rows } = await pool.query<{ query: string }>('select query from pg_stat_activity where application_name = $1', [APP])
  return rows[0]?.query
}

describe('the relay lock session', () => {
  it('runs its callers’ queries and its heartbeat one at a time on its connection: every answer in order, and pg does not warn', async () => {
    const pgWarnings = hearPgQueuedQueries()
    const session = await openLockSession({ pool, log }, { applicationName: APP, heartbeatMs: 1 })
    try {
      expect(await session.tryAcquire()).toBe(true)
      // A hundred callers at once, each query a little sleep, while the heartbeat fires every millisecond.
      const asked = Array.from({ length: 100 }, (_, i) => i)
      const answers = await Promise.all(asked.map((i) => session.query<{ i: number }>('select $1::int as i, pg_sleep(0.001)', [i])))
      expect(answers.map((a) => a.rows[0]?.i)).toEqual(asked)
      // The heartbeat went through the same connection meanwhile, and goes on once the callers are done.
      let seen: string | undefined
      for (let tries = 0; tries < 200 && seen !== 'select 1'; tries++) {
        seen = await lastQuery()
        await new Promise((r) => setTimeout(r, 10))
      }
      expect(seen).toBe('select 1')
      // A caller's failed query does not stop the ones after it.
      const failed = session.query('select 1/0')
      const after = session.query<{ ok: number }>('select 1 as ok')
      await expect(failed).rejects.toThrow(/division by zero/)
      expect((await after).rows[0]?.ok).toBe(1)
      expect(session.isLost()).toBe(false)
      await new Promise((r) => setTimeout(r, 20))
      expect(pgWarnings.heard()).toEqual([])
    } finally {
      pgWarnings.stop()
      await session.close()
    }
    // Closed: the lock is free for another session.
    const other = await openLockSession({ pool, log }, { applicationName: APP })
    try {
      expect(await other.tryAcquire()).toBe(true)
    } finally {
      await other.close()
    }
  })

  it('notices that its connection was ended, and another session takes the lock', async () => {
    const session = await openLockSession({ pool, log }, { applicationName: APP, heartbeatMs: 50 })
    const other = await openLockSession({ pool, log }, { applicationName: `${APP} other` })
    try {
      expect(await session.tryAcquire()).toBe(true)
      expect(await other.tryAcquire()).toBe(false)
      await pool.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [APP])
      const lost = await Promise.race([session.lost, new Promise<undefined>((r) => setTimeout(() => r(undefined), 5_000))])
      expect(lost).toBeInstanceOf(Error)
      expect(session.isLost()).toBe(true)
      expect(await other.tryAcquire()).toBe(true)
    } finally {
      await session.close()
      await other.close()
    }
  })
})
