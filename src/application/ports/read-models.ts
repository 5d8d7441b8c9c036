import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { JsonObject } from '../../domain/events/envelope.ts'
import type { BreakClass, ItemKind } from '../../domain/reconciliation/break-class.ts'
import type { RunScope } from '../../domain/reconciliation/events/values.ts'
import type { BreakStatus, KnownBreak } from '../../domain/reconciliation/lifecycle.ts'
import type { Refund } from '../../domain/refund/index.ts'
import type { Subscription } from '../../domain/subscription/index.ts'
import type { Position, RecordedEvent } from './event-store.ts'

/** A value a read model keeps for one stream, with the position of the last event it applied there. */
export type Projected<A> = { readonly value: A; readonly position: string }

/** A read model could not be read (unreachable, not migrated, a row that does not decode). */
export type ReadModelFailure = {
  readonly _tag: 'ReadModelFailure'
  readonly operation: string
  readonly retriable: boolean
  /** The read model's tables do not exist (yet): callers read the event log instead. */
  readonly missing: boolean
  readonly cause: unknown
}

/** What a quarantined callback claims to be about: the ids it names (`claimed` of CallbackQuarantined). */
export type QuarantineClaim = {
  readonly merchantId: string
  readonly kind: 'order' | 'refund' | 'subscription'
  readonly id: string
}

/** Quarantined callbacks as the audit log keeps them, up to its checkpoint (`undefined`: it has applied nothing yet). */
export type QuarantinedKept = { readonly events: ReadonlyArray<RecordedEvent>; readonly checkpoint: Position | undefined }

/** The creates awaiting their outcome, as of the `orders` read model's checkpoint. */
export type OpenCreates = { readonly streams: ReadonlySet<string>; readonly checkpoint: Position | undefined }

/**
 * The reads of the read models the use cases need. The projections implement them over the tables
 * they own (src/projections/queries.ts). Every answer may lag the event log: callers compare the
 * position with the stream's head before trusting a row.
 */
export type ReadModelQueries = {
  /** The payment view kept for an order stream, or undefined when there is no row. */
  readonly paymentView: (stream: string) => TE.TaskEither<ReadModelFailure, Projected<JsonObject> | undefined>
  readonly refund: (stream: string) => TE.TaskEither<ReadModelFailure, Projected<Refund> | undefined>
  readonly subscription: (stream: string) => TE.TaskEither<ReadModelFailure, Projected<Subscription> | undefined>
  /** Order streams whose create awaits its outcome, as far as the `orders` checkpoint has come. */
  readonly openCreates: () => TE.TaskEither<ReadModelFailure, OpenCreates>
  /** The events of `stream` as the audit log keeps them, in stream order (possibly a prefix of the stream). */
  readonly auditEvents: (stream: string) => TE.TaskEither<ReadModelFailure, ReadonlyArray<RecordedEvent>>
  /** The quarantined callbacks claiming `claim`, in log order, found by the audit log's index of claimed ids (never a scan of the quarantine). */
  readonly quarantinedNaming: (claim: QuarantineClaim) => TE.TaskEither<ReadModelFailure, QuarantinedKept>
}

/** Which items a reconciliation run checks (see `ReconciliationQueries.scope`). */
export type ScopeRequest = {
  readonly merchantId: string
  /** Items created on these Bangkok days (yyyy-MM-dd, inclusive); null for a sweep. */
  readonly days: { readonly from: string; readonly to: string } | null
  /** Items still open (not final) created before this instant. */
  readonly openCreatedBefore: Date
  /** Item streams to include whatever their date and state (the streams of open breaks). */
  readonly alsoStreams: ReadonlyArray<string>
}

export type ScopedPayment = {
  readonly stream: string
  readonly merchantOrderId: string
  /** The Bangkok day it was created (yyyy-MM-dd). */
  readonly day: string
  /** Satang of the order's refunds recorded, and their ids. */
  readonly refunded: bigint
  readonly refundIds: ReadonlyArray<string>
}

export type ScopedRefund = {
  readonly stream: string
  readonly merchantRefundId: string
  readonly merchantOrderId: string
  readonly day: string
  /** Whether satang has the refunded order, and its currency. */
  readonly orderKnown: boolean
  readonly orderCurrency: string | null
}

export type ScopedSubscription = { readonly stream: string; readonly merchantSubscribeId: string }

export type ReconciliationScope = {
  readonly payments: ReadonlyArray<ScopedPayment>
  readonly refunds: ReadonlyArray<ScopedRefund>
  /** Subscriptions the payer authorised at some point (active, suspended, completed or cancelled). */
  readonly subscriptions: ReadonlyArray<ScopedSubscription>
}

/** A break not resolved yet, with its item. */
export type KnownBreakRow = KnownBreak & { readonly itemKind: ItemKind; readonly itemId: string; readonly day: string; readonly stream: string | null }

/** A run that started and neither completed nor was superseded. */
export type UnfinishedRun = { readonly runId: string; readonly scope: RunScope; readonly startedAt: Date }

/** The reads reconciliation needs, over the `reconciliation_*` read models and the ones it checks. */
export type ReconciliationQueries = {
  /** The orders, refunds and subscriptions a run checks. */
  readonly scope: (r: ScopeRequest) => TE.TaskEither<ReadModelFailure, ReconciliationScope>
  /** Every break of the merchant not resolved yet (new, persisting or acknowledged). */
  readonly knownBreaks: (merchantId: string) => TE.TaskEither<ReadModelFailure, ReadonlyArray<KnownBreakRow>>
  readonly unfinishedRuns: (merchantId: string) => TE.TaskEither<ReadModelFailure, ReadonlyArray<UnfinishedRun>>
  /** The class and lifecycle status of a break, or undefined when there is none. */
  readonly breakStatus: (breakId: string) => TE.TaskEither<ReadModelFailure, { readonly merchantId: string; readonly class: BreakClass; readonly status: BreakStatus } | undefined>
  /** Whether a completed run has reconciled `day` (a Bangkok date) for the merchant. */
  readonly dayReconciled: (merchantId: string, day: string) => TE.TaskEither<ReadModelFailure, boolean>
}
