import * as E from 'fp-ts/lib/Either.js'
import type { JobLock, Lease } from '../application/ports/job-lock.ts'
import { BANGKOK_OFFSET_MS, bangkokDateOf, formatCalendarDate } from '../domain/bangkok-time.ts'
import type { Logger } from '../logger.ts'
import type { ReconcileFailure, ReconcileResult } from './reconcile/reconcile.ts'

/**
 * The reconciliation scheduler inside `satang up`: after `dailyAt` (Bangkok time) it reconciles the
 * day before, once (a day the read models show reconciled is not run again; a run that died half-way
 * is resumed); every `sweepEveryMs` it sweeps the items still pending, so a missed notification heals
 * within minutes. Only the process holding the scheduler lock acts, whatever the number of satang
 * processes sharing the database; the others keep trying to take it over. Stopping interrupts a run
 * between items: what it checked is recorded and the next start resumes it.
 */
export type SchedulerDeps = {
  readonly lock: JobLock
  readonly merchantId: string
  readonly now: () => Date
  readonly log: Logger
  readonly runDaily: (day: string, signal: AbortSignal) => Promise<E.Either<ReconcileFailure, ReconcileResult>>
  readonly runSweep: (signal: AbortSignal) => Promise<E.Either<ReconcileFailure, ReconcileResult>>
  /** Whether a completed run has reconciled the day (a Bangkok date). */
  readonly dayReconciled: (day: string) => Promise<boolean>
}

export type SchedulerConfig = {
  /** Minutes after Bangkok midnight from which the day before is reconciled (default 30: 00:30). */
  readonly dailyAtMinutes: number
  /** Between sweeps; 0: no sweeps. */
  readonly sweepEveryMs: number
  /** How often the scheduler looks at the clock (and tries for the lock when another process holds it). */
  readonly tickMs: number
}

/** Where the scheduler stands with its lock: holding it, waiting for another process to let go, or unable to ask (why). */
export type SchedulerLockState = { readonly lock: 'starting' | 'held' | 'waiting' | 'stopped' } | { readonly lock: 'failing'; readonly reason: string }

export type Scheduler = { readonly state: () => SchedulerLockState; readonly stop: () => Promise<void> }

const DAY_MS = 86_400_000

/** Minutes after Bangkok midnight of an instant. */
export const bangkokMinutesOf = (at: Date): number => Math.floor((((at.getTime() + BANGKOK_OFFSET_MS) % DAY_MS) + DAY_MS) % DAY_MS / 60_000)

/** The Bangkok date before the one `at` falls on. */
export const bangkokYesterdayOf = (at: Date): string => formatCalendarDate(bangkokDateOf(new Date(at.getTime() - DAY_MS)))

/** Which work is due at `at`, given when the last sweep ran and whether yesterday is reconciled. Pure. */
export const dueWork = (at: Date, config: SchedulerConfig, last: { readonly sweepAt: number | null; readonly dailyDone: boolean }): { readonly daily: string | null; readonly sweep: boolean } => ({
  daily: !last.dailyDone && bangkokMinutesOf(at) >= config.dailyAtMinutes ? bangkokYesterdayOf(at) : null,
  sweep: config.sweepEveryMs > 0 && (last.sweepAt === null || at.getTime() - last.sweepAt >= config.sweepEveryMs),
})

const describe = (e: ReconcileFailure): string => (e._tag === 'Interrupted' ? `interrupted after ${String(e.checked)} items` : e.message)

/** How long `stop` waits for a run in progress to reach a batch boundary. */
const STOP_GRACE_MS = 3_000

// Unref'd: the grace of a stop that settled early must not keep the process alive for the rest of it.
const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref())

/** Starts the scheduler; `stop` interrupts a run in progress (resumed at the next start) and releases the lock. */
export const startScheduler = (deps: SchedulerDeps, config: SchedulerConfig): Scheduler => {
  const log = deps.log.child({ component: 'reconcile-scheduler' })
  const stopping = new AbortController()
  let lease: Lease | null = null
  let lastSweepAt: number | null = null
  let dailyDoneFor: string | null = null
  let lockState: SchedulerLockState = { lock: 'starting' }

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (stopping.signal.aborted) return resolve()
      const timer = setTimeout(resolve, ms)
      stopping.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true })
    })

  const lead = async (): Promise<boolean> => {
    if (lease !== null) return true
    const taken = await deps.lock.tryAcquire({ job: 'scheduler', merchantId: deps.merchantId })()
    if (E.isLeft(taken)) {
      log.warn({ err: taken.left.cause }, 'the scheduler lock could not be taken; trying again')
      const cause = taken.left.cause
      lockState = { lock: 'failing', reason: `cannot ask for the scheduler lock: ${cause instanceof Error ? cause.message : 'the database did not answer'}` }
      return false
    }
    if (taken.right === null) {
      lockState = { lock: 'waiting' }
      return false
    }
    const held = taken.right
    lease = held
    lockState = { lock: 'held' }
    void held.lost.then(() => {
      if (lease !== held) return
      lease = null
      lockState = { lock: 'failing', reason: 'lost the scheduler lock (its database connection broke); trying to take it again' }
    })
    log.info('this process runs the reconciliation schedule')
    return true
  }

  const tick = async (): Promise<void> => {
    if (!(await lead())) return
    const at = deps.now()
    const yesterday = bangkokYesterdayOf(at)
    const dailyDone = dailyDoneFor === yesterday || (await deps.dayReconciled(yesterday))
    if (dailyDone) dailyDoneFor = yesterday
    const due = dueWork(at, config, { sweepAt: lastSweepAt, dailyDone })
    if (due.daily !== null && !stopping.signal.aborted) {
      log.info({ day: due.daily }, 'reconciling the day before')
      const r = await deps.runDaily(due.daily, stopping.signal)
      if (E.isRight(r)) {
        dailyDoneFor = due.daily
        log.info({ day: due.daily, runId: r.right.runId, verdict: r.right.verdict }, 'daily reconciliation done')
      } else if (r.left._tag !== 'Interrupted') log.warn({ day: due.daily, why: describe(r.left) }, 'daily reconciliation did not complete; tried again at the next tick')
    }
    if (due.sweep && !stopping.signal.aborted) {
      lastSweepAt = at.getTime()
      const r = await deps.runSweep(stopping.signal)
      if (E.isLeft(r) && r.left._tag !== 'Interrupted' && r.left._tag !== 'Busy') log.warn({ why: describe(r.left) }, 'sweep of pending items did not complete')
      else if (E.isRight(r) && r.right.recorded) log.info({ runId: r.right.runId, verdict: r.right.verdict }, 'sweep of pending items done')
    }
  }

  const loop = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      try {
        await tick()
      } catch (e) {
        // A defect of one tick (or the database gone): logged, and the schedule goes on.
        log.error({ err: e }, 'reconciliation scheduler tick failed')
      }
      await sleep(config.tickMs)
    }
  }
  const running = loop()

  return {
    state: () => lockState,
    stop: async () => {
      stopping.abort()
      lockState = { lock: 'stopped' }
      // A run stops between batches once aborted; one stuck on a database that is gone is left behind
      // (runs are resumable: the next one picks it up), so stopping takes seconds, never forever.
      const settled = await Promise.race([running.then(() => true), delay(STOP_GRACE_MS).then(() => false)])
      if (!settled) log.warn({ graceMs: STOP_GRACE_MS }, 'the reconciliation in progress did not stop in time; it is resumed by the next run')
      await lease?.release()
      lease = null
    },
  }
}
