import { randomUUID } from 'node:crypto'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { AnchorWriter } from '../application/ports/anchors.ts'
import { statusTables } from '../composition/gateway.ts'
import { makeAnchorWriter } from '../composition/anchors.ts'
import { makeReconcileDeps, startReconcileScheduler } from '../composition/reconciliation.ts'
import { startAnchorJob } from '../jobs/anchor.ts'
import type { ProcessContext, StartedRole } from './role.ts'

const hhmm = (minutes: number): string => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`

/**
 * The scheduler role: the daily reconciliation (after SATANG_RECONCILE_DAILY_AT, Bangkok) and the sweeps
 * of stale pending items, unless SATANG_RECONCILE_SCHEDULER=off. Several may run: one acts at a time
 * (a PostgreSQL advisory lock), the others take over when it stops.
 */
export const startSchedulerRole = async (ctx: ProcessContext): Promise<StartedRole> => {
  const { config, log } = ctx
  const on = config.SATANG_RECONCILE_SCHEDULER === 'on'
  // Anchors of the PostgreSQL log: every SATANG_ANCHOR_INTERVAL_MINUTES and after every run that records events.
  const anchors = config.SATANG_EVENT_STORE === 'postgres' ? await makeAnchorWriter(config, ctx.db, log) : undefined
  const interval = config.SATANG_ANCHOR_INTERVAL_MINUTES * 60_000
  const anchorJob = anchors === undefined ? undefined : startAnchorJob({ writer: anchors, log }, { intervalMs: interval, firstAfterMs: Math.min(interval, 10_000) })
  // After a run the scheduler waits up to 10 s for its events to be anchored; a stop ends that wait at
  // once (the next anchor covers the run), so the run settles within the scheduler's stop grace instead
  // of writing through a pool that is closed meanwhile.
  const stopping = new AbortController()
  const runAnchors: AnchorWriter | undefined =
    anchors === undefined
      ? undefined
      : { write: (reason, options) => (stopping.signal.aborted ? TE.left({ _tag: 'AnchorFailure', operation: 'write', retriable: true, cause: new Error('satang is stopping') }) : anchors.write(reason, options)) }
  const scheduler = on
    ? await (async () => {
        const gateway = await ctx.gateway()
        return startReconcileScheduler(
          config,
          makeReconcileDeps({ config, store: ctx.store, db: ctx.db, gateway: gateway.client, merchantId: gateway.merchantId, statusTables: statusTables(config), log, newId: randomUUID, ...(runAnchors === undefined ? {} : { anchors: runAnchors }) }),
        )
      })()
    : undefined
  return {
    role: 'scheduler',
    routes: [],
    checks: [],
    // Holding the scheduler lock or waiting for it are both ready (one process acts, the others stand by).
    readiness:
      scheduler === undefined
        ? []
        : [
            {
              name: 'scheduler_lock',
              check: async () => {
                const state = scheduler.state()
                if (state.lock === 'failing') return state.reason
                if (state.lock === 'stopped') return 'the scheduler is stopped'
                return null
              },
            },
          ],
    listening: () => undefined,
    summary: () => [
      on
        ? `reconciliation scheduler: the day before after ${hhmm(config.SATANG_RECONCILE_DAILY_AT)} Bangkok, sweeps of pending items every ${String(config.SATANG_RECONCILE_SWEEP_MINUTES)} min (satang reconcile for a run by hand)`
        : 'reconciliation scheduler off (SATANG_RECONCILE_SCHEDULER=off): run satang reconcile',
      anchors === undefined
        ? 'anchors: none (the EventStoreDB log is protected by its own access control; docs/audit.md "Tamper evidence")'
        : `anchors of the event log ${interval > 0 ? `every ${String(config.SATANG_ANCHOR_INTERVAL_MINUTES)} min and ` : ''}after every reconciliation run that records events, signed with ${anchors.keyPath}${anchors.generated ? ' (generated now)' : ''}${config.SATANG_ANCHOR_FILE === undefined ? '' : `, also appended to ${config.SATANG_ANCHOR_FILE}`}`,
    ],
    stop: async () => {
      stopping.abort()
      await scheduler?.stop()
      await anchorJob?.stop()
    },
  }
}
