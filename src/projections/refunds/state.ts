import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { Position, type JsonObject } from '../../application/ports/event-store.ts'
import { Count, Instant, nullable, ObservationSource, SatangAmount, StatusClassificationCodec } from '../../domain/events/codecs.ts'
import { discrepancyObserved } from '../../domain/events/common/discrepancy-observed.ts'
import { JsonObjectCodec } from '../../domain/events/json.ts'
import type { StatusClassification } from '../../domain/gateway/statuses.ts'
import { TrackedBy } from '../../domain/refund/events/refund-tracked.ts'
import { initialRefundState, type Refund, type RefundState } from '../../domain/refund/state.ts'
import { describeErrors, keepEventData, KeptEventData, readKeptEventData } from '../kept-state.ts'

/*
 * The refund aggregate's state as JSON, so that the `refunds` projection can keep it between batches
 * and evolve it with the domain's own `evolve`: the read model then agrees with the aggregate by
 * construction. Instants are ISO-8601 UTC text, satang digit strings, discrepancies are kept as the
 * event data they came from (with its schema version, so a later version of the event still reads).
 *
 * `observationKeys` is NOT kept: only `decide` reads it (to drop an observation already recorded),
 * `evolve` only adds to it, and no read model shows it; it would grow with every observation. A
 * decoded state carries an empty set, so it must never be handed to `decide`.
 */

const embedded = readKeptEventData('refund state')

const Status = t.strict({ code: t.string, classification: StatusClassificationCodec, source: ObservationSource, observedAt: Instant })

const Recorded = t.strict({ amount: SatangAmount, currency: t.string, recordedAt: Instant })

const Stored = t.strict({
  merchantId: t.string,
  merchantRefundId: t.string,
  merchantOrderId: t.string,
  trackedBy: TrackedBy,
  trackedAt: Instant,
  refundOrderId: nullable(t.string),
  status: nullable(Status),
  recorded: nullable(Recorded),
  discrepancies: t.array(KeptEventData),
  unclassifiedStatuses: t.array(t.string),
})

const classificationOf = (c: StatusClassification): StatusClassification => ({ code: c.code, meaning: c.meaning, outcome: c.outcome, final: c.final, needsReview: c.needsReview })

// Built field by field: io-ts `encode` copies keys it does not know (`_tag`, `observationKeys`).
const encodeRefund = (s: Refund): JsonObject =>
  Stored.encode({
    merchantId: s.merchantId,
    merchantRefundId: s.merchantRefundId,
    merchantOrderId: s.merchantOrderId,
    trackedBy: s.trackedBy,
    trackedAt: s.trackedAt,
    refundOrderId: s.refundOrderId,
    status: s.status === null ? null : { code: s.status.code, classification: classificationOf(s.status.classification), source: s.status.source, observedAt: s.status.observedAt },
    recorded: s.recorded === null ? null : { amount: s.recorded.amount, currency: s.recorded.currency, recordedAt: s.recorded.recordedAt },
    discrepancies: s.discrepancies.map((d) => keepEventData(discrepancyObserved, d)),
    unclassifiedStatuses: [...s.unclassifiedStatuses],
  })

/** The state as JSON; `null` for a refund stream without RefundTracked (nothing to keep). */
export const encodeRefundState = (s: RefundState): JsonObject | null => (s._tag === 'NoRefund' ? null : encodeRefund(s))

/** The state back from `encodeRefundState`'s JSON (`null` → no refund). Throws on anything else: the projection stops on it. */
export const decodeRefundState = (json: unknown): RefundState => {
  if (json === null || json === undefined) return initialRefundState
  const decoded = Stored.decode(json)
  if (E.isLeft(decoded)) throw new Error(`refund state does not decode: ${describeErrors(decoded.left)}`)
  const s = decoded.right
  const refund: Refund = {
    _tag: 'Refund',
    merchantId: s.merchantId,
    merchantRefundId: s.merchantRefundId,
    merchantOrderId: s.merchantOrderId,
    trackedBy: s.trackedBy,
    trackedAt: s.trackedAt,
    refundOrderId: s.refundOrderId,
    status: s.status,
    recorded: s.recorded,
    observationKeys: new Set(),
    discrepancies: s.discrepancies.map(embedded(discrepancyObserved)),
    unclassifiedStatuses: s.unclassifiedStatuses,
  }
  return refund
}

// ---- what the `refunds` projection keeps per stream ----

/**
 * The aggregate state of one tracked refund plus what the read model shows that the aggregate does not
 * keep. Stored (internal) in `refunds.projection_state`.
 */
export type RefundView = {
  readonly state: Refund
  /** The gateway's `complete_time` reported by the observation that made the status final; null while not final or when none was sent. */
  readonly completedAt: Date | null
  /** Distinct verified REFUND notifications recorded (NotificationReceived): a redelivery is not recorded again. */
  readonly notificationsSeen: number
  /** Distinct refund query answers recorded (RefundStatusObserved or DiscrepancyObserved from a query). */
  readonly queriesSeen: number
  /** Position of the stream's last event applied. */
  readonly lastEventPosition: Position
  /** When the store committed the stream's last event applied (UTC). */
  readonly updatedAt: Date
}

/** Bumped whenever the stored shape changes; a view stored by another version stops the projection with a request to rebuild it. */
export const REFUND_VIEW_VERSION = 1

const StoredView = t.strict({
  version: t.literal(REFUND_VIEW_VERSION),
  state: JsonObjectCodec,
  completedAt: nullable(Instant),
  notificationsSeen: Count,
  queriesSeen: Count,
  lastEventPosition: Position,
  updatedAt: Instant,
})

export const encodeRefundView = (v: RefundView): JsonObject =>
  StoredView.encode({
    version: REFUND_VIEW_VERSION,
    state: encodeRefund(v.state),
    completedAt: v.completedAt,
    notificationsSeen: v.notificationsSeen,
    queriesSeen: v.queriesSeen,
    lastEventPosition: v.lastEventPosition,
    updatedAt: v.updatedAt,
  })

/** The view back from `encodeRefundView`'s JSON. Throws (naming what is wrong) on anything else. */
export const decodeRefundView = (json: unknown): RefundView => {
  const decoded = StoredView.decode(json)
  if (E.isLeft(decoded)) throw new Error(`refunds projection state does not decode (rebuild the projection: satang project --rebuild refunds): ${describeErrors(decoded.left)}`)
  const v = decoded.right
  const state = decodeRefundState(v.state)
  if (state._tag !== 'Refund') throw new Error('refunds projection state holds no refund')
  return { state, completedAt: v.completedAt, notificationsSeen: v.notificationsSeen, queriesSeen: v.queriesSeen, lastEventPosition: v.lastEventPosition, updatedAt: v.updatedAt }
}
