import { setTimeout as sleep } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresJobLock } from '../../src/adapters/postgres/job-lock.ts'
import type { ReconcileResult } from '../../src/jobs/reconcile/reconcile.ts'
import { startScheduler, type Scheduler } from '../../src/jobs/scheduler.ts'
import { silentLogger } from '../../src/logger.ts'
import { freshDatabase } from '../adapters/http/database.ts'

/**
 * Several satang processes share a database: only the one holding the scheduler's advisory lock runs
 * the daily reconciliation and the sweeps; when it stops, another takes over. (Real PostgreSQL locks;
 * the runs are recorded calls.)
 */

let db: Awaited<ReturnType<typeof freshDatabase>>
const pools: Pool[] = []

beforeAll(async () => {
  db = await freshDatabase('sched')
})
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()))
  await db.drop()
})

const started = Date.now()

const done = (runId: string): E.Either<never, ReconcileResult> => E.right({ recorded: true, runId, verdict: 'reconciled', report: {} })

/** A scheduler as one process would run it, with its own pool; `calls` records what it ran. */
const aProcess = (name: string, calls: string[], reconciled: Set<string>): Scheduler => {
  const pool = new Pool({ connectionString: db.url, max: 3 })
  pools.push(pool)
  return startScheduler(
    {
      lock: makePostgresJobLock({ pool, log: silentLogger() }),
      merchantId: '140000000000000001',
      // Bangkok 12:00 on 2 March, moving with real time.
      now: () => new Date(Date.parse('2026-03-02T05:00:00Z') + (Date.now() - started)),
      log: silentLogger(),
      runDaily: async (day) => {
        calls.push(`${name}:daily:${day}`)
        reconciled.add(day)
        return done(`${name}-daily`)
      },
      runSweep: async () => {
        calls.push(`${name}:sweep`)
        return done(`${name}-sweep`)
      },
      dayReconciled: async (day) => reconciled.has(day),
    },
    { dailyAtMinutes: 30, sweepEveryMs: 1, tickMs: 20 },
  )
}

describe('the reconciliation scheduler across processes', () => {
  it('one process acts at a time; the daily run happens once; another takes over when it stops', async () => {
    const calls: string[] = []
    const reconciled = new Set<string>()
    const a = aProcess('a', calls, reconciled)
    await sleep(300)
    const b = aProcess('b', calls, reconciled)
    try {
      await sleep(300)
      expect(calls.filter((c) => c.includes(':daily:'))).toEqual(['a:daily:2026-03-01'])
      expect(calls.filter((c) => c.startsWith('b:'))).toEqual([])
      expect(calls.filter((c) => c === 'a:sweep').length).toBeGreaterThan(1)

      await a.stop()
      const before = calls.length
      const deadline = Date.now() + 10_000
      while (!calls.slice(before).includes('b:sweep')) {
        if (Date.now() > deadline) throw new Error(`b never took over: ${calls.slice(before).join(', ')}`)
        await sleep(20)
      }
      expect(calls.slice(before).every((c) => c.startsWith('b:'))).toBe(true)
      expect(calls.filter((c) => c.includes(':daily:'))).toHaveLength(1)
    } finally {
      await a.stop()
      await b.stop()
    }
  })
})
