import { setTimeout as sleep } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import type { AnchorWriter } from '../application/ports/anchors.ts'
import type { EventStore } from '../application/ports/event-store.ts'
import type { GatewayPort } from '../application/ports/gateway.ts'
import { gatherAppends } from '../adapters/eventstore/gathered-appends.ts'
import { makePostgresJobLock } from '../adapters/postgres/job-lock.ts'
import type { Pool } from 'pg'
import type { Config } from '../config.ts'
import type { StatusTable } from '../domain/gateway/statuses.ts'
import type { ReconcileDeps, ReconcilePolicy } from '../jobs/reconcile/context.ts'
import { reconcile } from '../jobs/reconcile/reconcile.ts'
import { startScheduler, type Scheduler } from '../jobs/scheduler.ts'
import type { Logger } from '../logger.ts'
import { READ_MODEL_SCHEMA } from '../projections/index.ts'
import { readCheckpoints } from '../projections/checkpoints.ts'
import { makeReconciliationQueries } from '../projections/reconciliation/queries.ts'

/*
 * Composition of reconciliation: the job's dependencies from configuration, the wait for the read
 * models it reads, and the scheduler of `satang up` (which the `scheduler` process role starts).
 */

/** The projections a run reads: they must have applied the log before it lists its items. */
const READ_MODELS = ['orders', 'refunds', 'subscriptions', 'reconciliation'] as const

export const reconcilePolicyOf = (config: Config): ReconcilePolicy => ({
  notFoundGraceMs: config.SATANG_RECONCILE_NOT_FOUND_GRACE_MINUTES * 60_000,
  stalePendingMs: config.SATANG_RECONCILE_STALE_PENDING_HOURS * 3_600_000,
  chargeGraceMs: config.SATANG_RECONCILE_CHARGE_GRACE_HOURS * 3_600_000,
})

/**
 * Resolves once the read models a run reads have applied every event the log holds (whoever runs the
 * projector); fails when one of them is stopped on an event, or after `timeoutMs`.
 */
export const waitForReadModels =
  (store: EventStore, db: { readonly pool: Pool }, timeoutMs = 300_000) =>
  async (): Promise<void> => {
    const deadline = Date.now() + timeoutMs
    // The head as committed now, readable yet or not (see EventStore.headPosition).
    const head = await store.headPosition()()
    if (E.isLeft(head)) throw new Error(`reading the event log failed (${head.left.operation})`)
    for (;;) {
      const checkpoints = await readCheckpoints(db.pool, READ_MODEL_SCHEMA, [...READ_MODELS])
      let behind = checkpoints.size < READ_MODELS.length
      for (const c of checkpoints.values()) {
        if (c.failure !== null) throw new Error(`the ${c.name} read model is stopped (${c.failure.message}); see satang project --status`)
        if (head.right !== undefined && (c.position === null || c.position < head.right)) behind = true
      }
      if (!behind) return
      if (Date.now() > deadline) throw new Error(`the read models (${READ_MODELS.join(', ')}) did not catch up with the event log within ${String(timeoutMs / 1000)} s; is the projector running?`)
      await sleep(50)
    }
  }

export const makeReconcileDeps = (a: {
  readonly config: Config
  readonly store: EventStore
  readonly db: { readonly pool: Pool }
  readonly gateway: GatewayPort
  readonly merchantId: string
  readonly statusTables: { readonly payment: StatusTable; readonly refund: StatusTable }
  readonly log: Logger
  readonly newId: () => string
  /** Anchors the log after every completed run (the PostgreSQL store). */
  readonly anchors?: AnchorWriter
}): ReconcileDeps => ({
  // The appends of a run's concurrent checks (one evidence event per order) go many to a round trip.
  store: gatherAppends(a.store, { maxAppends: 256, maxInFlight: 1 }),
  gateway: a.gateway,
  queries: makeReconciliationQueries({ pool: a.db.pool, schema: READ_MODEL_SCHEMA }),
  lock: makePostgresJobLock({ pool: a.db.pool, log: a.log }),
  merchantId: a.merchantId,
  statusTables: a.statusTables,
  notFoundCodes: a.config.SATANG_GATEWAY_NOT_FOUND_CODES,
  now: () => new Date(),
  newId: a.newId,
  log: a.log,
  readModelsCaughtUp: waitForReadModels(a.store, a.db),
  ...(a.anchors === undefined ? {} : { afterRun: anchorAfterRun(a.anchors, a.store, a.log) }),
})

/** After a run: an anchor of the log that covers the run's events (docs/audit.md "Tamper evidence"); a failure is logged, the run stands. */
const anchorAfterRun =
  (anchors: AnchorWriter, store: EventStore, log: Logger) =>
  async (runId: string): Promise<void> => {
    // The run's events are at or before the log's head now. They become readable once every older
    // append has ended (the store's horizon): until then an anchor covering them cannot be written
    // (null), so it is tried again for a while. One written meanwhile by the periodic job that covers
    // them already is the answer. (Without the head, any new anchor will do, as before.)
    const head = await store.headPosition()()
    const covering = E.isRight(head) ? head.right : undefined
    for (let attempt = 0; attempt < 40; attempt++) {
      const written = await anchors.write(`reconciliation run ${runId}`, covering === undefined ? {} : { covering })()
      if (E.isLeft(written)) {
        log.child({ component: 'anchor' }).warn({ err: written.left.cause, runId }, 'the anchor after a reconciliation run could not be written; the next one covers it')
        return
      }
      if (written.right !== null) return
      await sleep(250)
    }
    log.child({ component: 'anchor' }).warn({ runId }, 'the events of the reconciliation run did not become readable within 10 s; the next anchor covers them')
  }

/** The scheduler of `satang up`: daily run and sweeps, one process acting per database. */
export const startReconcileScheduler = (config: Config, deps: ReconcileDeps): Scheduler => {
  const policy = reconcilePolicyOf(config)
  const base = { concurrency: config.SATANG_RECONCILE_CONCURRENCY, dryRun: false, trigger: 'scheduler', actor: null, policy } as const
  return startScheduler(
    {
      lock: deps.lock,
      merchantId: deps.merchantId,
      now: deps.now,
      log: deps.log,
      runDaily: (day, signal) => reconcile(deps, { ...base, scope: { kind: 'days', from: day, to: day }, signal }),
      runSweep: (signal) => reconcile(deps, { ...base, scope: { kind: 'sweep', minAgeMs: config.SATANG_RECONCILE_SWEEP_MIN_AGE_MINUTES * 60_000 }, signal }),
      dayReconciled: async (day) => {
        const r = await deps.queries.dayReconciled(deps.merchantId, day)()
        if (E.isLeft(r)) throw new Error(`reading reconciliation_days failed (${r.left.operation})`, { cause: r.left.cause })
        return r.right
      },
    },
    { dailyAtMinutes: config.SATANG_RECONCILE_DAILY_AT, sweepEveryMs: config.SATANG_RECONCILE_SWEEP_MINUTES * 60_000, tickMs: 30_000 },
  )
}
