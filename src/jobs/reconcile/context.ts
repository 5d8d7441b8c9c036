import type { EventStore } from '../../application/ports/event-store.ts'
import type { AggregateStreamCache } from '../../application/stream-cache.ts'
import type { GatewayPort } from '../../application/ports/gateway.ts'
import type { JobLock } from '../../application/ports/job-lock.ts'
import type { KnownBreakRow, ReconciliationQueries } from '../../application/ports/read-models.ts'
import type { StatusTable } from '../../domain/gateway/statuses.ts'
import type { ComparePolicy } from '../../domain/reconciliation/comparison.ts'
import type { Logger } from '../../logger.ts'

/** What the reconciliation job needs: the log, the gateway's queries, the read models, a lock, a clock. */
export type ReconcileDeps = {
  readonly store: EventStore
  readonly gateway: Pick<GatewayPort, 'queryPayment' | 'queryRefund'>
  readonly queries: ReconciliationQueries
  readonly lock: JobLock
  readonly merchantId: string
  readonly statusTables: { readonly payment: StatusTable; readonly refund: StatusTable }
  /** Gateway error codes that mean "no such order / refund". */
  readonly notFoundCodes: ReadonlyArray<number>
  readonly now: () => Date
  readonly newId: () => string
  readonly log: Logger
  /** Resolves once the read models have applied the log as it stands when called. */
  readonly readModelsCaughtUp: () => Promise<void>
  /** Called after every completed run that recorded events (not a dry run, nor a sweep that changed nothing): writes an anchor of the log (docs/audit.md "Tamper evidence"). Its failure is logged, never the run's. */
  readonly afterRun?: (runId: string) => Promise<void>
}

/** How long before a not-found, a pending status or a missing charge is a break. */
export type ReconcilePolicy = {
  readonly notFoundGraceMs: number
  readonly stalePendingMs: number
  readonly chargeGraceMs: number
}

/** One run as its item checks see it. */
export type RunContext = {
  readonly deps: ReconcileDeps
  readonly runId: string
  readonly merchantId: string
  readonly policy: ComparePolicy & { readonly chargeGraceMs: number }
  readonly dryRun: boolean
  /** The run is resumed after its process died: an item healed before the crash is counted as healed. */
  readonly resumed: boolean
  readonly startedAt: Date
  /** Breaks not resolved yet, by item key (`kind:id`). */
  readonly known: ReadonlyMap<string, ReadonlyArray<KnownBreakRow>>
  /**
   * How the payment checks record: the log, and the run's cache of order states, filled ahead of the
   * checks a page of streams at a time (`preload`), so that a check decides without a read of its own.
   */
  readonly recording: { readonly store: EventStore; readonly now: () => Date; readonly newId: () => string; readonly streamCache: AggregateStreamCache }
}

