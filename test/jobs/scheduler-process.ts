// One satang process running the reconciliation scheduler, for test/jobs/scheduler-processes.int.test.ts:
// `node test/jobs/scheduler-process.ts` with SCHED_DATABASE_URL, SCHED_TABLE (where runs are recorded) and
// SCHED_NAME. The runs are recorded calls (the gateway is not the subject); the lock is PostgreSQL's.
// Runs until killed.
import * as E from 'fp-ts/lib/Either.js'
import { Pool } from 'pg'
import { makePostgresJobLock } from '../../src/adapters/postgres/job-lock.ts'
import { startScheduler } from '../../src/jobs/scheduler.ts'
import { silentLogger } from '../../src/logger.ts'

const env = (name: string): string => {
  const v = process.env[name]
  if (v === undefined || v === '') throw new Error(`${name} is required`)
  return v
}

const pool = new Pool({ connectionString: env('SCHED_DATABASE_URL'), max: 3 })
const table = env('SCHED_TABLE')
const name = env('SCHED_NAME')
const started = Date.now()

/** Records one run: its start and end (clock of this machine), after `ms` of work. */
const run = async (kind: string, day: string | null, ms: number): Promise<E.Either<never, { recorded: true; runId: string; verdict: 'reconciled'; report: Record<string, never> }>> => {
  const from = new Date()
  await new Promise((r) => setTimeout(r, ms))
  await pool.query(`insert into ${table} (process, kind, day, started_at, ended_at) values ($1, $2, $3, $4, now())`, [name, kind, day, from])
  return E.right({ recorded: true, runId: `${name}-${kind}`, verdict: 'reconciled', report: {} })
}

startScheduler(
  {
    lock: makePostgresJobLock({ pool, log: silentLogger() }),
    merchantId: '140000000000000001',
    // Bangkok 12:00 on 2 March, moving with real time: the daily run of 1 March is due.
    now: () => new Date(Date.parse('2026-03-02T05:00:00Z') + (Date.now() - started)),
    log: silentLogger(),
    runDaily: (day) => run('daily', day, 200),
    runSweep: () => run('sweep', null, 50),
    dayReconciled: async (day) => (await pool.query(`select 1 from ${table} where kind = 'daily' and day = $1`, [day])).rows.length > 0,
  },
  { dailyAtMinutes: 30, sweepEveryMs: 1, tickMs: 20 },
)
process.stdout.write('started\n')
