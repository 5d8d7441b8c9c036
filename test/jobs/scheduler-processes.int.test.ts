import { spawn, type ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../adapters/http/database.ts'

/*
 * The reconciliation scheduler from two real OS processes on one database: only the holder of the
 * scheduler's advisory lock runs anything; the daily run happens once; when the holder is SIGKILLed,
 * the other takes over. (test/jobs/scheduler.int.test.ts shows the same with two pools in one process.)
 */

const CHILD = fileURLToPath(new URL('./scheduler-process.ts', import.meta.url))
const TABLE = 'scheduler_runs'

let db: Awaited<ReturnType<typeof freshDatabase>>
let pool: Pool
const children: ChildProcess[] = []

beforeAll(async () => {
  db = await freshDatabase('schedproc')
  pool = new Pool({ connectionString: db.url, max: 2 })
  await pool.query(`create table ${TABLE} (process text not null, kind text not null, day text, started_at timestamptz not null, ended_at timestamptz not null)`)
})
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await pool.end()
  await db.drop()
})

const start = (name: string): ChildProcess => {
  const c = spawn(process.execPath, [CHILD], { env: { ...process.env, SCHED_DATABASE_URL: db.url, SCHED_TABLE: TABLE, SCHED_NAME: name }, stdio: ['ignore', 'ignore', 'inherit'] })
  children.push(c)
  return c
}

type Run = { process: string; kind: string; day: string | null; started_at: Date; ended_at: Date }
const runs = async (): Promise<ReadonlyArray<Run>> => (await pool.query<Run>(`select process, kind, day, started_at, ended_at from ${TABLE} order by started_at`)).rows

const waitFor = async (what: string, check: (rs: ReadonlyArray<Run>) => boolean, ms = 30_000): Promise<void> => {
  const deadline = Date.now() + ms
  while (!check(await runs())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await runs())}`)
    await sleep(50)
  }
}

describe('the reconciliation scheduler in two OS processes on one database', () => {
  it('only the lock holder acts, the daily run happens once, and the other takes over when the holder is SIGKILLed', async () => {
    const a = start('a')
    await waitFor('a to run', (rs) => rs.some((r) => r.process === 'a' && r.kind === 'sweep'))
    start('b')
    await sleep(2_000)
    const beforeKill = await runs()
    expect(beforeKill.filter((r) => r.process === 'b')).toEqual([])
    expect(beforeKill.filter((r) => r.kind === 'daily').map((r) => [r.process, r.day])).toEqual([['a', '2026-03-01']])

    a.kill('SIGKILL')
    const killedAt = Date.now()
    await new Promise((r) => a.once('exit', r))
    await waitFor('b to take over', (rs) => rs.filter((r) => r.process === 'b' && r.kind === 'sweep').length >= 3)
    const all = await runs()
    // b acted only once a was gone (its first run started after the kill), and never ran the day again.
    const firstOfB = all.find((r) => r.process === 'b')
    expect(firstOfB !== undefined && firstOfB.started_at.getTime() >= killedAt - 50).toBe(true)
    expect(all.filter((r) => r.kind === 'daily')).toHaveLength(1)
    // No two runs ever overlapped in time.
    for (let i = 1; i < all.length; i++) expect((all[i]?.started_at.getTime() ?? 0) >= (all[i - 1]?.ended_at.getTime() ?? 0)).toBe(true)
  })
})
